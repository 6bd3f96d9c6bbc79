"""Find catalogued sink calls syntactically, with ``ast``: no call graph, no types.

A call's dotted name is built from what is written (``a.b(...).c`` reads ``a.b.c``),
its first name replaced by what binds it in the file: an import (``from django.core
import mail``), a ``with X(...) as s``, or an assignment ``s = X(...)`` / ``s = X`` in
the same function or at module level whose right side resolves. A call matches an
exact catalogue entry by that resolved name, or a method entry (``?.sendmail``,
``[[keyword]]``) by its trailing names and the receiver as written plus its resolved
type (``?`` when unknown), as the analyzer tests receivers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum

from bench.census._catalogue import MethodSink, SinkCatalogue
from inventory import EffectKind

_SELF = frozenset({"self", "cls"})


class MatchHow(StrEnum):
    EXACT = "exact"  # the resolved dotted name matches an exact entry
    TYPED_METHOD = "typed_method"  # a method entry, receiver bound by an import in the file
    METHOD_NAME = "method_name"  # a method entry on a receiver nothing in the file binds
    KEYWORD = "keyword"  # a [[keyword]] name rule (``x.send_welcome_email()``), receiver unbound


@dataclass(frozen=True)
class Sink:
    path: str  # POSIX, relative to the package root (as the inventory reports it)
    line: int
    column: int
    kind: EffectKind
    api: str  # the resolved dotted name, or the call as written for method matches
    how: MatchHow
    function: str  # qualified name of the enclosing function (or the module)
    source: str  # the source line, stripped


def module_name(path: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def find_sinks(source: str, path: str, catalogue: SinkCatalogue) -> list[Sink]:
    """Every sink call in one file's ``source``; a file that does not parse has none."""
    return find_in_file(source, path, catalogue)[0]


def find_in_file(source: str, path: str, catalogue: SinkCatalogue) -> tuple[list[Sink], set[str]]:
    """The file's sink calls, and the names of the functions and methods it defines."""
    tree = parse(source)
    return find_in_tree(tree, source, path, catalogue) if tree is not None else ([], set())


def parse(source: str) -> ast.Module | None:
    """The file's syntax tree; None when it does not parse."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def find_in_tree(
    tree: ast.Module,
    source: str,
    path: str,
    catalogue: SinkCatalogue,
    imports: dict[str, str] | None = None,
) -> tuple[list[Sink], set[str]]:
    """``imports``: :func:`imports_of` ``tree``, when the caller has it already."""
    finder = _Finder(path, source.splitlines(), catalogue)
    finder.scopes[0].bindings.update(imports if imports is not None else imports_of(tree))
    finder.visit(tree)
    defined = {
        n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return finder.sinks, defined


def drop_own_keyword_calls(sinks: list[Sink], defined: set[str]) -> list[Sink]:
    """A keyword match (``x.send_notice_email()``) naming a function the package defines is a
    call into the package's own code: the sink inside it is counted where it is."""
    return [s for s in sinks if s.how != MatchHow.KEYWORD or _method(s.api) not in defined]


def _method(api: str) -> str:
    return api.rsplit(".", 1)[-1]


@dataclass
class _Scope:
    qualname: str
    bindings: dict[str, str]
    is_function: bool
    methods: frozenset[str] = frozenset()  # for a class: the names it defines


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, lines: list[str], catalogue: SinkCatalogue) -> None:
        self.path, self.lines, self.catalogue = path, lines, catalogue
        self.sinks: list[Sink] = []
        self.defined: set[str] = set()  # every function and method name in the file
        self.scopes = [_Scope(module_name(path), {}, is_function=False)]

    # --- scopes and bindings -------------------------------------------------
    def visit_Module(self, node: ast.Module) -> None:
        self._bind_body(node, self.scopes[0].bindings)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        names = frozenset(
            n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        )
        self._enter(node, f"{self._prefix()}{node.name}", is_function=False, methods=names)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.defined.add(node.name)
        self._enter(node, f"{self._prefix()}{node.name}", is_function=True)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _prefix(self) -> str:
        top = self.scopes[-1]
        return f"{top.qualname}.<locals>." if top.is_function else f"{top.qualname}."

    def _enter(
        self,
        node: ast.AST,
        qualname: str,
        *,
        is_function: bool,
        methods: frozenset[str] = frozenset(),
    ) -> None:
        bindings: dict[str, str] = {}
        if is_function:
            self._bind_body(node, bindings)
        self.scopes.append(_Scope(qualname, bindings, is_function, methods))
        self.generic_visit(node)
        self.scopes.pop()

    def _bind_body(self, node: ast.AST, into: dict[str, str]) -> None:
        """Names bound in ``node``'s own body (not nested functions) to something resolvable."""
        for child in _own_nodes(node):
            for name, value in _binding(child):
                dotted = self.resolve(value)
                if dotted is not None:
                    into[name] = dotted

    def lookup(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope.bindings:
                return scope.bindings[name]
        return None

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted name of ``node`` with its first name resolved, or None."""
        parts = _parts(node)
        if not parts:
            return None
        root = self.lookup(parts[0])
        return None if root is None else ".".join([root, *parts[1:]])

    # --- calls ---------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        match = self._match(node)
        if match is not None:
            kind, api, how = match
            line = self.lines[node.lineno - 1].strip() if node.lineno <= len(self.lines) else ""
            function = self.scopes[-1].qualname
            self.sinks.append(
                Sink(self.path, node.lineno, node.col_offset, kind, api, how, function, line)
            )
        self.generic_visit(node)

    def _match(self, node: ast.Call) -> tuple[EffectKind, str, MatchHow] | None:
        dotted = self.resolve(node.func)
        if dotted is not None:
            entry = self.catalogue.exact_match(dotted)
            if entry is not None:
                return entry.kind, dotted, MatchHow.EXACT
        if isinstance(node.func, ast.Attribute):
            return self._method_match(node.func, node)
        return None

    def _method_match(
        self, func: ast.Attribute, call: ast.Call
    ) -> tuple[EffectKind, str, MatchHow] | None:
        for entry in self.catalogue.methods:
            receiver = _receiver(func, entry)
            if receiver is None or self._own_method(receiver, func.attr) or not entry.counts(call):
                continue
            typed = self.resolve(receiver)
            text = f"{ast.unparse(receiver)} {typed if typed is not None else '?'}"
            if entry.receiver is None or entry.receiver.search(text):
                how = MatchHow.TYPED_METHOD if typed is not None else MatchHow.METHOD_NAME
                if entry.keyword and typed is None:
                    how = MatchHow.KEYWORD
                return entry.kind, ast.unparse(func), how
        return None

    def _own_method(self, receiver: ast.expr, method: str) -> bool:
        """``self.send_mail()`` where the enclosing class defines ``send_mail``: the sink, if
        any, is in that method's body, which is counted there."""
        if not (isinstance(receiver, ast.Name) and receiver.id in _SELF):
            return False
        return any(method in s.methods for s in self.scopes if not s.is_function)


def _receiver(func: ast.Attribute, entry: MethodSink) -> ast.expr | None:
    """The receiver left once ``entry``'s trailing names are taken off, if they match."""
    names: list[str] = []
    node: ast.expr = func
    while isinstance(node, ast.Attribute):
        names.insert(0, node.attr)
        node = node.value
        if entry.name.fullmatch(".".join(names)):
            return node
    return None


def _parts(node: ast.expr) -> list[str] | None:
    """``a.B(...).c`` -> ``[a, B, c]``; None when the chain starts with no name or passes
    through a function's result (``requests.get(u).json`` is no ``requests.get.json``)."""
    names: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            names.insert(0, node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            if not _constructs(node.func):
                return None  # a function's result: its type is not written anywhere
            node = node.func
        elif isinstance(node, ast.Name):
            return [node.id, *names]
        else:
            return None


def _constructs(func: ast.expr) -> bool:
    """``SMTP(...)`` / ``mail.EmailMessage(...)``: a class by naming convention."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name[:1].isupper()


def imports_of(tree: ast.AST) -> dict[str, str]:
    """Every import in the file, wherever it is (function-level imports included): the
    name bound -> the dotted name it stands for."""
    into: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    into[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    into[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                into[alias.asname or alias.name] = (
                    f"{base}.{alias.name}" if node.module else f"{base}{alias.name}"
                )
    return into


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """Statements of ``node``'s body and their children, not entering nested defs/classes."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        found.append(child)
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
        ):
            stack.extend(ast.iter_child_nodes(child))
    return found


def _binding(node: ast.AST) -> list[tuple[str, ast.expr]]:
    """``name = value``, ``name: T = value`` and ``with value as name``."""
    if isinstance(node, ast.Assign):
        return [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return [(node.target.id, node.value)]
    if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
        return [(node.optional_vars.id, node.context_expr)]
    return []
