"""Who names whom in a package, by name only: the defs and the places that mention them.

A *mention* of a name is any use of it in code the scan reads: a bare name, an attribute
(``x.name``), a string that spells it (``getattr(self, "name")``, ``call_command("name")``)
or a dotted path ending in it (``"app.tasks.name"`` in a setting), or the prefix or suffix
of a name looked up at run time (``getattr(mod, f"send_to_{channel}")`` mentions every
``send_to_*``). Import statements, docstrings and prose mention nothing. A name resolved through the file's imports to a
module outside the package (``requests.get``, ``from json import dumps``) mentions no
package def. Everything else counts by its last name alone, whatever the receiver: that
over-approximates the callers of a def, which is what makes the rule of ``_scope`` sound.

Each mention is recorded with its *place*:

* ``CALLER``: inside a function (its qualname, as the sink finder names functions);
* ``QUEUED``: handed to a job queue, which runs it in a worker (``f.delay(...)``,
  ``f.apply_async``, ``f.s(...)``, ``f.send(...)`` of an actor, ``queue.enqueue(f, ...)``,
  pulpcore's ``dispatch(f, ...)``);
* ``IMPORT_CALL``: called at import time (a module or class body calls it);
* ``MODULE_REF``: named, not called, by a module or class body (a URLconf, a registry dict,
  ``atexit.register(f)``): someone else calls it, later;
* ``MAIN``: under ``if __name__ == "__main__":`` or in a ``__main__.py``: a command line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from enum import StrEnum

from bench.census._finder import module_name

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*[.:][A-Za-z_][A-Za-z0-9_]*")
# Methods of a task object that queue it (Celery, Dramatiq, Huey, RQ's @job).
_QUEUE_METHODS = frozenset(
    {"delay", "apply_async", "s", "si", "signature", "send", "send_with_options"}
    | {"schedule", "map", "starmap", "chunks", "call_local"}
)
# Functions that queue the callable they are handed first (RQ's Queue, pulpcore's dispatch).
_ENQUEUE_CALLS = frozenset({"enqueue", "enqueue_call", "enqueue_in", "enqueue_at", "dispatch"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Place(StrEnum):
    CALLER = "caller"
    QUEUED = "queued"
    IMPORT_CALL = "import_call"
    MODULE_REF = "module_ref"
    MAIN = "main"


@dataclass(frozen=True)
class Def:
    qualname: str
    name: str
    module: str
    parent: str | None  # the enclosing function of a nested def
    cls: str | None  # the class of a method
    decorators: tuple[str, ...]  # resolved through the file's imports when possible


@dataclass(frozen=True)
class ClassDef:
    qualname: str
    name: str
    module: str
    bases: tuple[str, ...]  # resolved dotted names, else as written


@dataclass
class Mentions:
    """Every def, class and mention of one package."""

    roots: frozenset[str]  # the package's top-level module names (what is "inside")
    defs: dict[str, Def] = field(default_factory=dict)
    classes: dict[str, ClassDef] = field(default_factory=dict)
    by_name: dict[str, set[tuple[Place, str]]] = field(default_factory=dict)
    affixes: list[tuple[str, str, Place, str]] = field(default_factory=list)  # prefix, suffix
    main_lines: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # __main__ guards
    imports: dict[str, set[str]] = field(default_factory=dict)  # module -> imported top names

    def add_file(self, tree: ast.Module, path: str, imports: dict[str, str]) -> None:
        """``imports``: the file's imports (``_finder.imports_of``)."""
        _FileWalk(self, path, imports).walk(tree)

    def mentioned(self, name: str) -> set[tuple[Place, str]]:
        found = set(self.by_name.get(name, ()))
        for prefix, suffix, place, scope in self.affixes:
            if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix):
                found.add((place, scope))
        return found

    def add(self, name: str, place: Place, scope: str) -> None:
        self.by_name.setdefault(name, set()).add((place, scope))


class _FileWalk:
    def __init__(self, into: Mentions, path: str, imports: dict[str, str]) -> None:
        self.into, self.module = into, module_name(path)
        self.bindings = imports
        self.is_main = path.rsplit("/", 1)[-1] == "__main__.py"

    def walk(self, tree: ast.Module) -> None:
        self.into.imports[self.module] = {v.split(".")[0] for v in self.bindings.values()}
        self._scope(tree.body, self.module, function=False)

    # --- scopes --------------------------------------------------------------
    def _scope(self, body: list[ast.stmt], qualname: str, *, function: bool) -> None:
        """Record what ``body`` mentions, then enter the defs and classes it holds."""
        nodes = _own_nodes(body)
        guard = [] if function else _main_guards(body)
        if guard and qualname == self.module:
            self.into.main_lines.setdefault(self.module, []).extend(
                (g.lineno, g.end_lineno or g.lineno) for g in guard
            )
        self._mentions(body, nodes, qualname, function=function, guards=guard)
        for node in nodes:
            if isinstance(node, _DEFS):
                self._def(node, qualname, function=function)
            elif isinstance(node, ast.ClassDef):
                self._class(node, qualname, function=function)

    def _def(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: str, *, function: bool
    ) -> None:
        qualname = f"{outer}.<locals>.{node.name}" if function else f"{outer}.{node.name}"
        cls = outer if outer in self.into.classes and not function else None
        self.into.defs[qualname] = Def(
            qualname,
            node.name,
            self.module,
            parent=outer if function else None,
            cls=cls,
            decorators=tuple(self._dotted(_decorated(d)) for d in node.decorator_list),
        )
        self._scope(node.body, qualname, function=True)

    def _class(self, node: ast.ClassDef, outer: str, *, function: bool) -> None:
        qualname = f"{outer}.<locals>.{node.name}" if function else f"{outer}.{node.name}"
        bases = tuple(self._dotted(b) for b in node.bases)
        self.into.classes[qualname] = ClassDef(qualname, node.name, self.module, bases)
        self._scope(node.body, qualname, function=False)

    # --- mentions ------------------------------------------------------------
    def _mentions(
        self,
        body: list[ast.stmt],
        nodes: list[ast.AST],
        scope: str,
        *,
        function: bool,
        guards: list[ast.If],
    ) -> None:
        queued = _queued_nodes(nodes)
        called = set() if function else _called_nodes(nodes)
        in_guard = {id(n) for g in guards for n in ast.walk(g)}
        docstrings = _docstrings(body)
        for node in nodes:
            name = self._name_of(node)
            if name is None:
                if id(node) not in docstrings:
                    self._strings(node, scope, function, in_guard)
                continue
            place = self._place(node, function, queued, called, in_guard)
            self.into.add(name, place, scope)

    def _place(
        self, node: ast.AST, function: bool, queued: set[int], called: set[int], guard: set[int]
    ) -> Place:
        if id(node) in queued:
            return Place.QUEUED
        if self.is_main or id(node) in guard:
            return Place.MAIN
        if function:
            return Place.CALLER
        return Place.IMPORT_CALL if id(node) in called else Place.MODULE_REF

    def _name_of(self, node: ast.AST) -> str | None:
        """The package name ``node`` mentions, if it is a name or an attribute of one."""
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return None if self._outside(node.id) else node.id
        if isinstance(node, ast.Attribute):
            root = _root_name(node)
            return None if root is not None and self._outside(root) else node.attr
        return None

    def _strings(self, node: ast.AST, scope: str, function: bool, guard: set[int]) -> None:
        place = Place.MAIN if self.is_main or id(node) in guard else None
        place = place or (Place.CALLER if function else Place.MODULE_REF)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = _named_by(node.value)
            if name is not None:
                self.into.add(name, place, scope)
        elif isinstance(node, ast.Call) and _looks_up(node):
            for prefix, suffix in _affixes(node.args[1]):
                self.into.affixes.append((prefix, suffix, place, scope))

    def _outside(self, name: str) -> bool:
        """``name`` is bound by an import of a module that is not part of the package."""
        bound = self.bindings.get(name)
        if bound is None or bound.startswith("."):
            return False
        return bound.split(".")[0] not in self.into.roots

    def _dotted(self, node: ast.expr) -> str:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Call):
            return self._dotted(node.func)
        if not isinstance(node, ast.Name):
            return ast.unparse(node)
        head = self.bindings.get(node.id, node.id)
        return ".".join([head, *parts])


def _decorated(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of ``body`` that run in its scope: a nested def's decorators, defaults and
    annotations and a nested class's bases run here; their bodies do not. Nested def and
    class nodes themselves are included (for the caller to enter)."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, _DEFS):
            args = node.args
            stack.extend([*node.decorator_list, *args.defaults])
            stack.extend(d for d in args.kw_defaults if d is not None)
        elif isinstance(node, ast.ClassDef):
            stack.extend([*node.decorator_list, *node.bases, *(k.value for k in node.keywords)])
        elif not isinstance(node, ast.Import | ast.ImportFrom):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _queued_nodes(nodes: list[ast.AST]) -> set[int]:
    """Ids of the name or attribute nodes naming a callable handed to a job queue."""
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in _QUEUE_METHODS:
            if isinstance(node.value, ast.Name | ast.Attribute):
                found.add(id(node.value))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if last in _ENQUEUE_CALLS and isinstance(node.args[0], ast.Name | ast.Attribute):
                found.add(id(node.args[0]))
    return found


def _called_nodes(nodes: list[ast.AST]) -> set[int]:
    """Ids of the name or attribute nodes a module or class body calls."""
    return {
        id(node.func)
        for node in nodes
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }


def _docstrings(body: list[ast.stmt]) -> set[int]:
    """Ids of the docstring constant of ``body`` (a scope's own statements)."""
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return {id(first.value)}
    return set()


def _main_guards(body: list[ast.stmt]) -> list[ast.If]:
    return [s for s in body if isinstance(s, ast.If) and _is_main_test(s.test)]


def _is_main_test(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    values = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and values == {"__main__"}


def _named_by(text: str) -> str | None:
    """The name a string spells: the whole string (``"handle"``, ``call_command("import_rss")``)
    or the last part of a dotted path (``"app.tasks.notify"``, ``"app.views:signup"``).
    Prose, SQL and templates name nothing."""
    if _IDENTIFIER.fullmatch(text):
        return text
    if _DOTTED.fullmatch(text):
        return re.split(r"[.:]", text)[-1]
    return None


def _looks_up(call: ast.Call) -> bool:
    """``getattr(x, f"send_to_{channel}")`` / ``hasattr``: a name built at run time."""
    func = call.func
    return (
        isinstance(func, ast.Name)
        and func.id in ("getattr", "hasattr")
        and len(call.args) >= 2
        and isinstance(call.args[1], ast.JoinedStr | ast.BinOp)
    )


def _affixes(node: ast.expr) -> list[tuple[str, str]]:
    """``f"send_to_{x}"`` -> ("send_to_", ""); ``x + "_handler"`` -> ("", "_handler"): the
    identifier fragments next to a part known only at run time."""
    parts = _string_parts(node)
    if parts is None or all(isinstance(p, str) for p in parts):
        return []
    found = []
    for i, part in enumerate(parts):
        if not isinstance(part, str):
            continue
        after_dynamic = i > 0 and not isinstance(parts[i - 1], str)
        before_dynamic = i + 1 < len(parts) and not isinstance(parts[i + 1], str)
        if before_dynamic and (m := re.search(r"[A-Za-z_][A-Za-z0-9_]*$", part)):
            found.append((m.group(0), ""))
        if after_dynamic and (m := re.match(r"[A-Za-z0-9_]+", part)):
            found.append(("", m.group(0)))
    return found


def _string_parts(node: ast.expr) -> list[str | None] | None:
    """A string expression as its constant parts (``str``) and run-time parts (``None``)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) else None for v in node.values]  # type: ignore[misc]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_parts(node.left), _string_parts(node.right)
        if left is None and right is None:
            return None
        return [*(left or [None]), *(right or [None])]
    return None
