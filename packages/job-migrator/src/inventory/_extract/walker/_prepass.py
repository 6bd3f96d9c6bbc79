"""Statement-level passes that run before bodies are walked.

Function bodies run after the module has finished loading, so they see every
module-level import, class, function and global, even those defined below
them; and ``self.x`` in one method may be assigned in another. Only
statements are visited here (never expressions), which keeps this cheap.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from inventory._extract._imports import bindings_of
from inventory._extract._library import NARROWING, STATEMENTS, statement_class
from inventory._extract._nodes import own_nodes, walk
from inventory._extract._resolve import (
    APP_OBJECT,
    MODEL_LOADED,
    TABLE,
    Resolver,
    attribute_chain,
    capitalised,
    constructed_on,
    extension_object,
    public_name,
)
from inventory._extract._scopes import (
    BRANCHED,
    GLOBAL_WRITERS,
    Binding,
    BindingKind,
    ClassCtx,
    Scope,
    ScopeKind,
)
from inventory._extract._source import clean
from inventory._extract.values._proxies import (
    PROXIES,
    held_classes,
    made_by_attribute,
    returned_attribute,
)
from inventory._extract.values._registry import app_stores
from inventory._extract.values._tables import table_values
from inventory._extract.values._values import (
    ELEMENT,
    HELD,
    ITEM,
    LITERALS,
    NARROWS,
    Held,
    Own,
    annotation_type,
    binding_for_value,
    container_annotation,
    element_annotation,
    held_binding,
    held_value,
    makes_class_named_at_run_time,
    module_set,
    queryset_annotation,
    queryset_model,
    type_args,
    union_type,
)
from inventory.summary import ATTR_CLASS, FileSummary

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ALIASES = (BindingKind.ALIAS, BindingKind.IMPORT, BindingKind.FUNCTION, BindingKind.CLASS)


# statements() of a body, for the file being read: several passes (types, containers,
# attributes, returns) walk the same method bodies. Each entry keeps its body alive, so
# no id is reused while cached; gather_module, the first pass of each file, clears it.
_FLAT: dict[int, tuple[list[ast.stmt], list[ast.stmt]]] = {}


def statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of a body, through if/try/with/for/match blocks, not into defs or classes."""
    cached = _FLAT.get(id(body))
    if cached is None or cached[0] is not body:
        cached = _FLAT[id(body)] = (body, list(_statements(body)))
    return cached[1]


def _statements(body: list[ast.stmt], checking: bool = True) -> Iterator[ast.stmt]:
    """Every statement of ``body``, those of nested blocks included (never a nested scope).
    ``checking=False``: what runs, leaving out the body of ``if TYPE_CHECKING:``."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If) and _type_checking(stmt.test):
            # ``if TYPE_CHECKING: X = Real`` / ``else: X = Any``: the real type wins.
            yield from _statements(stmt.orelse, checking)
            if checking:
                yield from _statements(stmt.body)
        elif isinstance(stmt, ast.If | ast.For | ast.AsyncFor | ast.While):
            yield from _statements(stmt.body, checking)
            yield from _statements(stmt.orelse, checking)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            yield from _statements(stmt.body, checking)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from _statements(part, checking)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _statements(case.body, checking)


def _type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def gather_module(tree: ast.Module, summary: FileSummary, scope: Scope, resolver: Resolver) -> None:
    _FLAT.clear()
    _CONTAINERS.clear()
    top = list(statements(tree.body))
    for stmt in top:
        _declare(stmt, summary, scope)
    for name in _branch_bound(tree.body, top, summary.module, summary.is_package):
        scope.names[f"{name}{BRANCHED}"] = Binding(BindingKind.OTHER)
    for stmt in top:
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            _assign(stmt, summary, scope, resolver)
    _rebound_callables(tree, summary, scope)
    summary.rebound = rebound_after_definition(tree, summary.module, summary.is_package)
    if summary.tables or any(k.endswith(TABLE) for k in summary.assignments):
        _drop_registries(tree, summary)
    # ``app.extensions["x"] = self``, ``app.mail = Mail(app)``: for ``current_app`` look-ups
    stored = app_stores(tree, scope.prefix, resolver, binding_for_value, union_type)
    summary.assignments.update({k: public_name(v, summary.module) for k, v in stored.items()})
    fresh: dict[str, str] = {}
    _mark_global_writers(tree, scope)
    _return_types(top, scope.prefix, resolver, fresh, summary.is_package)
    for qualname, returned in list(resolver.returns.items()):
        if qualname.endswith(NARROWS):
            local = qualname.removeprefix(f"{scope.prefix}.").removesuffix(NARROWS)
            summary.narrowing_helpers[local] = int(returned)
            continue
        # ``get_adapter().send_mail()`` in another module is written
        # ``pkg.adapter.get_adapter().send_mail``: the index reads ``get_adapter()`` here
        # (``Session.current()`` for a method: ``Session.current().close``); what iterating
        # the result gives is ``get_adapter()[]``.
        local = qualname.removeprefix(f"{scope.prefix}.")
        if local.endswith(ELEMENT):
            local = f"{local.removesuffix(ELEMENT)}(){ELEMENT}"
        else:
            local = f"{local}()"
        summary.assignments[local] = public_name(returned, summary.module)
    for qualname, made in fresh.items():
        local = qualname.removeprefix(f"{scope.prefix}.")
        summary.fresh_returns[local] = public_name(made, summary.module)


_UNTYPED_RETURNS = ("builtins.", "typing.", "collections.", "?")
# The builtin containers an annotated return stands for (``annotation_type``'s spellings).
_BUILTIN_CONTAINERS = frozenset({"builtins.dict", "builtins.list", "builtins.set"})
_SELF = frozenset({"typing.Self", "typing_extensions.Self"})


def _return_types(
    top: list[ast.stmt],
    prefix: str,
    resolver: Resolver,
    fresh: dict[str, str],
    is_package: bool = False,
) -> None:
    """Which functions and methods of this file return an instance of a known class.

    ``def get_adapter() -> Adapter`` and ``msg = EmailMessage(...); return msg`` let
    ``get_adapter().send_mail()`` and ``self.render_mail().send()`` resolve to the method
    that runs. Builtin and typing annotations are left out: they name no project code.
    Also what iterating the result gives (``-> Iterator[Stat]``, a generator's yields), a
    queryset returned (``-> QuerySet[Tag]``, ``return Tag.objects.filter(...)``: typed
    ``Tag.objects``), and which return a new instance (``fresh``, see ``_fresh_return``).
    """
    for qualname, node, own in _defs(top, prefix):
        # first: a helper's return may hand on what a later one narrows (``cls.scoped(q)``)
        handed = _narrowed_parameter(node, own)
        if handed is not None:
            resolver.returns[f"{qualname}{NARROWS}"] = str(handed)
    for stmt in top:
        if isinstance(stmt, _DEFS):
            body = list(statements(stmt.body))
            inside = _with_imports(stmt, body, resolver, is_package)
            _return_type(stmt, body, f"{prefix}.{stmt.name}", inside, None, fresh)
        elif isinstance(stmt, ast.ClassDef):
            cls = f"{prefix}.{stmt.name}"
            held = _held_attributes(stmt, resolver)
            for inner in stmt.body:
                if isinstance(inner, _DEFS):
                    own = _own(inner, cls)
                    body = list(statements(inner.body))
                    inside = _with_imports(inner, body, resolver, is_package)
                    qualname = f"{cls}.{inner.name}"
                    holds = (own[0], held) if own is not None and held else None
                    _return_type(inner, body, qualname, inside, own, fresh, holds)


def _defs(
    top: list[ast.stmt], prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, Own | None]]:
    """The module's functions and the methods of its classes, with their qualnames."""
    for stmt in top:
        if isinstance(stmt, _DEFS):
            yield f"{prefix}.{stmt.name}", stmt, None
        elif isinstance(stmt, ast.ClassDef):
            cls = f"{prefix}.{stmt.name}"
            for inner in stmt.body:
                if isinstance(inner, _DEFS):
                    yield f"{cls}.{inner.name}", inner, _own(inner, cls)


def _with_imports(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    body: list[ast.stmt],
    resolver: Resolver,
    is_package: bool,
) -> Resolver:
    """The module's resolver, plus the imports the body makes (``from .models import
    Change`` inside the function, against an import cycle): what its returns build."""
    imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    if not imports:
        return resolver
    scope = resolver.scope.child(ScopeKind.FUNCTION, node.name)
    for stmt in imports:
        for local, target in bindings_of(stmt, resolver.module, is_package):
            if local != "*":
                scope.names[local] = Binding(BindingKind.IMPORT, target)
    return resolver.child(scope)


def _own(node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str) -> Own | None:
    positional = [*node.args.posonlyargs, *node.args.args]
    kinds = {_decorator(d) for d in node.decorator_list}
    if not positional or "staticmethod" in kinds:
        return None
    return positional[0].arg, cls, "classmethod" in kinds


def _decorator(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _return_type(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    body: list[ast.stmt],
    qualname: str,
    resolver: Resolver,
    own: Own | None,
    fresh: dict[str, str],
    holds: Held | None = None,
) -> None:
    found = annotation_type(node.returns, resolver) if node.returns is not None else ""
    if found in _SELF:
        # ``-> Self`` (PEP 673): an instance of the class the method is called on; the
        # defining class stands for it (a subclass's overrides are followed as for any call).
        found = own[1] if own is not None else ""
    if found and makes_class_named_at_run_time(own_nodes(node), resolver):
        found = ""  # the annotation names an interface; the app's settings choose the class
    generator = _generator(body)
    plain = not generator and not isinstance(node, ast.AsyncFunctionDef)
    if not found and plain:
        found = _returned_instance(body, resolver, holds, node, own)
    if not found and plain and own is not None and not own[2]:
        found = returned_attribute(body, own[0], own[1])  # ``return self._mail``
    stored = found.startswith(APP_OBJECT) or (own is not None and found.startswith(f"{own[1]}."))
    if found and (capitalised(found) or stored) and not found.startswith(_UNTYPED_RETURNS):
        resolver.returns[qualname] = found
    elif found in _BUILTIN_CONTAINERS and node.returns is not None:
        # ``-> set[str]``, ``-> dict[str, Any]``: the annotation says so, whatever the body
        # builds; ``s = f(); s.add(x)`` is the set's add.
        resolver.returns[qualname] = found
    # ``-> tuple[Session, Query]``, else ``return query, conditions``: each item's class
    items = _annotated_items(node.returns, resolver)
    if not items and plain:
        items = _tuple_items(body, resolver, holds, node, own)
    for position, item in items.items():
        resolver.returns[f"{qualname}{ITEM}{position}"] = item
    queryset = queryset_annotation(node.returns, resolver)
    if not queryset and plain and (not found or found.endswith("QuerySet")):
        queryset = _returned_queryset(body, resolver, own)
    if queryset:
        resolver.returns[qualname] = queryset
    element = element_annotation(node.returns, resolver)
    if not element and generator and isinstance(node, ast.FunctionDef):
        element = _yielded_instance(node, body, resolver)
    if element and capitalised(element) and not element.startswith(_UNTYPED_RETURNS):
        resolver.returns[f"{qualname}{ELEMENT}"] = element
        if _context_manager(node, resolver):
            # ``with f() as x``: x is what the generator yields (``-> Iterator[Session]``).
            resolver.returns[qualname] = element
    made = _fresh_return(body, resolver, own) if plain else ""
    if made:
        fresh[qualname] = made


def _annotated_items(node: ast.expr | None, resolver: Resolver) -> dict[int, str]:
    """``-> tuple[Session, Query]`` / ``Tuple[...]`` / ``Optional[tuple[...]]``: the class
    each position holds, where its annotation names one; {} for ``tuple[X, ...]``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        none = [
            isinstance(side, ast.Constant) and side.value is None
            for side in (node.left, node.right)
        ]
        node = node.left if none[1] else node.right if none[0] else None
    if not isinstance(node, ast.Subscript):
        return {}
    head = resolver.dotted(node.value) or ""
    if head in ("typing.Optional", "typing_extensions.Optional"):
        return _annotated_items(node.slice, resolver)
    if head not in ("builtins.tuple", "typing.Tuple", "tuple", "Tuple"):
        return {}
    args = type_args(node)
    if len(args) < 2 or any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in args):
        return {}
    found: dict[int, str] = {}
    for position, arg in enumerate(args):
        item = annotation_type(arg, resolver)
        # a class, or a builtin container as a return is (``-> tuple[Lock, set]``)
        a_class = capitalised(item) and not item.startswith(_UNTYPED_RETURNS)
        if item and (a_class or item in _BUILTIN_CONTAINERS):
            found[position] = item
    return found


def _tuple_items(
    body: list[ast.stmt],
    resolver: Resolver,
    holds: Held | None,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    own: Own | None,
) -> dict[int, str]:
    """``return query, conditions`` (and ``return None, conditions`` in another branch):
    when every ``return`` gives a tuple of one length, the class each position holds, read
    as a single return's value is (``None`` items aside: the item is that or None)."""
    returned = [s.value for s in body if isinstance(s, ast.Return)]
    tuples = [v for v in returned if isinstance(v, ast.Tuple)]
    if not tuples or len(tuples) != len(returned):
        return {}
    size = len(tuples[0].elts)
    if size < 2 or any(len(t.elts) != size for t in tuples):
        return {}
    if any(isinstance(e, ast.Starred) for t in tuples for e in t.elts):
        return {}
    found: dict[int, str] = {}
    for position in range(size):
        values = [t.elts[position] for t in tuples if not _none(t.elts[position])]
        item = _one_class(values, body, resolver, holds, node, own) if values else ""
        if item and capitalised(item) and not item.startswith(_UNTYPED_RETURNS):
            found[position] = item
    return found


_CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})


def _context_manager(node: ast.FunctionDef | ast.AsyncFunctionDef, resolver: Resolver) -> bool:
    """Decorated ``@contextmanager`` / ``@asynccontextmanager``."""
    return any(resolver.dotted(d) in _CONTEXT_MANAGERS for d in node.decorator_list)


def _generator(body: list[ast.stmt]) -> bool:
    """A ``yield`` statement in the body (not in a nested def): calling it makes a generator."""
    for stmt in body:
        value = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
        if isinstance(value, ast.Yield | ast.YieldFrom):
            return True
    return False


def _yielded_instance(node: ast.FunctionDef, body: list[ast.stmt], resolver: Resolver) -> str:
    """The one class every ``yield`` of a generator builds (``yield Stat(...)``, or a local
    assigned ``Stat(...)``); "" when one yields anything else, or ``yield from``."""
    values: list[ast.expr] = []
    for part in own_nodes(node):
        if isinstance(part, ast.YieldFrom):
            return ""
        if isinstance(part, ast.Yield):
            if part.value is None:
                return ""
            values.append(part.value)
    return _one_class(values, body, resolver)


def _returned_instance(
    body: list[ast.stmt],
    resolver: Resolver,
    holds: Held | None = None,
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
    own: Own | None = None,
) -> str:
    """The class every ``return`` of the body constructs (directly or through a local), or
    looks up in a container annotated with the class of its values (``return
    sessions.get(key)``); ``return None`` branches do not count (the result is it or None)."""
    values = [
        s.value
        for s in body
        if isinstance(s, ast.Return) and s.value is not None and not _none(s.value)
    ]
    return _one_class(values, body, resolver, holds, node, own) if values else ""


def _local_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Parameters and names the body binds: they hide the module's containers."""
    args = node.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for part in own_nodes(node):
        if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Store):
            names.add(part.id)
    return frozenset(names)


def _container_root(value: ast.expr) -> str:
    """``sessions`` of ``sessions.get(k)`` / ``sessions[k]``, "" for anything else."""
    node = (
        value.func.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
        else value
    )
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _none(value: ast.expr | None) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


def _one_class(
    returned: list[ast.expr],
    body: list[ast.stmt],
    resolver: Resolver,
    holds: Held | None = None,
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
    own: Own | None = None,
) -> str:
    """The class every one of the values constructs (directly or through a local).

    Several library classes of one module (``EmailMultiAlternatives`` in one branch,
    ``EmailMessage`` in the other: allauth's render_mail) stand for one another: the
    first is taken. Classes of this file must agree, their methods are followed.
    """
    found: list[str] = []
    narrowed = False
    for value in returned:
        if _own_instance(value, own):
            found.append(own[1] if own is not None else "")
            continue
        if isinstance(value, ast.Name) and node is not None:
            if _rebound_elsewhere(node, value.id, resolver):
                return ""  # ``configure()`` rebinds it: which class it holds is set at run time
            module_held = _module_instance(node, value.id, resolver)
            if module_held:
                found.append(module_held)  # ``return _client``: the module's one instance
                continue
        values = _local_values(body, value.id) if isinstance(value, ast.Name) else [value]
        for each in values:
            if isinstance(value, ast.Name) and (
                _narrows(each, value.id) or _handed_on(each, value.id, resolver, own)
            ):
                narrowed = True  # ``q = q.where(...)``: what ``q``'s other values make
                continue
            held = held_value(each, resolver, holds)
            if held and node is not None and _container_root(each) in _local_names(node):
                return ""  # a parameter or local of that name, not the module's container
            if held:
                found.append(held)
                continue
            valued = isinstance(each, ast.Call) or extension_object(each)
            binding = binding_for_value(each, resolver) if valued else None
            if binding is None or binding.kind is not BindingKind.INSTANCE:
                return ""
            found.append(statement_class(binding.target))  # ``-> "Select"`` as imported
    kinds = set(found)
    if narrowed and not (kinds and kinds <= STATEMENTS):
        return ""  # only SQLAlchemy's statements are known to narrow into themselves
    if len(kinds) == 1:
        return found[0]
    modules = {kind.rpartition(".")[0] for kind in kinds}
    module = resolver.module
    if len(modules) == 1 and not any(k.startswith(f"{module}.") for k in kinds):
        return found[0]
    return ""


def _mark_global_writers(tree: ast.Module, scope: Scope) -> None:
    """Module names a function rebinds under ``global`` (``def configure(): global _backend;
    _backend = StripeBackend()``), with the functions that do (``GLOBAL_WRITERS``). A name
    the module annotates is left out: its declared class holds whatever is bound."""
    annotated = {
        s.target.id
        for s in tree.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    }
    writers: dict[str, list[str]] = {}
    for fn in walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        parts = own_nodes(fn)
        declared = {n for part in parts if isinstance(part, ast.Global) for n in part.names}
        for part in parts if declared else ():
            if isinstance(part, ast.Assign):
                targets = part.targets
            elif isinstance(part, ast.AnnAssign | ast.AugAssign):
                targets = [part.target]
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id in declared - annotated:
                    writers.setdefault(target.id, []).append(str(id(fn)))
    for name, ids in writers.items():
        scope.names[f"{name}{GLOBAL_WRITERS}"] = Binding(BindingKind.OTHER, ",".join(ids))


def _module_global(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """``name`` in ``node`` is the module's: declared ``global`` there, or not bound there."""
    declared = {n for part in own_nodes(node) if isinstance(part, ast.Global) for n in part.names}
    return name in declared or name not in _local_names(node)


def _rebound_elsewhere(
    node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, resolver: Resolver
) -> bool:
    """``name`` is a module global (not this function's own) that another function of the
    module rebinds under ``global``, or that a block of the module binds (``BRANCHED``)."""
    if not _module_global(node, name):
        return False
    if resolver.scope.lookup(f"{name}{BRANCHED}") is not None:
        return True
    marker = resolver.scope.lookup(f"{name}{GLOBAL_WRITERS}")
    return marker is not None and any(w != str(id(node)) for w in marker.target.split(","))


def _module_instance(
    node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, resolver: Resolver
) -> str:
    """The class of the module-level instance a getter returns by name: ``_client =
    Client()`` then ``def get_client(): return _client``, or the lazy singleton ``_layer:
    Optional[Layer] = None`` with ``global _layer; if _layer is None: _layer = ...;
    return _layer`` (the declared class: what the function assigns is one of it). "" when
    ``name`` is the function's own (a parameter or a local it binds without ``global``), or
    the module's binding is no instance of a known class (``_layer = None`` unannotated:
    the function's own assignments say, as for a local)."""
    if not _module_global(node, name):
        return ""
    binding = resolver.scope.lookup(name)
    if binding is None or binding.kind is not BindingKind.INSTANCE or not binding.target:
        return ""
    return statement_class(binding.target)


def _own_instance(value: ast.expr, own: Own | None) -> bool:
    """``return cls(...)`` in a classmethod, ``return self`` in a method: an instance of
    the class the method is called on (the defining class stands for it)."""
    if own is None:
        return False
    param, _, classmethod = own
    if classmethod:
        if not isinstance(value, ast.Call):
            return False
        func = constructed_on(value.func)  # ``return cls.model_validate(data)`` too
        return isinstance(func, ast.Name) and func.id == param
    return isinstance(value, ast.Name) and value.id == param


def _narrowed_parameter(
    node: ast.FunctionDef | ast.AsyncFunctionDef, own: Own | None
) -> int | None:
    """``def paginate(query, n): query = query.limit(n); return query``: the position, in a
    call, of the parameter every ``return`` gives back narrowed by a statement's
    generative methods (and every assignment to it narrows it too); None otherwise. A
    method's ``self``/``cls`` is not a call's argument."""
    positional = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    if own is not None:
        positional = positional[1:]
    returned: str | None = None
    for part in own_nodes(node):
        if isinstance(part, ast.Yield | ast.YieldFrom):
            return None
        if isinstance(part, ast.Return):
            value = part.value
            name = value.id if isinstance(value, ast.Name) else _chain_root(value)
            if name is None or (returned is not None and name != returned):
                return None
            returned = name
    if returned is None or returned not in positional:
        return None
    for part in own_nodes(node):
        if isinstance(part, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.NamedExpr):
            targets = part.targets if isinstance(part, ast.Assign) else [part.target]
            for target in targets:
                if any(isinstance(n, ast.Name) and n.id == returned for n in ast.walk(target)):
                    value = part.value
                    if value is None or not _narrows(value, returned):
                        return None
        elif isinstance(part, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith):
            bound = [part.target] if isinstance(part, ast.For | ast.AsyncFor) else []
            bound += [i.optional_vars for i in getattr(part, "items", []) if i.optional_vars]
            if any(
                isinstance(n, ast.Name) and n.id == returned for b in bound for n in ast.walk(b)
            ):
                return None
    return positional.index(returned)


def _handed_on(value: ast.expr, name: str, resolver: Resolver, own: Own | None) -> bool:
    """``query = cls.scoped(query, actor)``: ``name`` handed to a function or method of this
    file that returns it narrowed (``_narrowed_parameter``), through ``cls``/``self`` too."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if own is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        target = f"{own[1]}.{func.attr}" if func.value.id == own[0] else ""
    else:
        target = resolver.expr(func).target if isinstance(func, ast.Name | ast.Attribute) else ""
    position = resolver.returns.get(f"{target}{NARROWS}") if target else None
    if position is None or int(position) >= len(value.args):
        return False
    handed = value.args[int(position)]
    return isinstance(handed, ast.Name) and handed.id == name


def _chain_root(value: ast.expr | None) -> str | None:
    """``q.where(...).limit(n)`` -> ``q`` when every method is a statement's narrowing."""
    if value is None:
        return None
    node = value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr not in NARROWING:
            return None
        node = node.func.value
    return node.id if isinstance(node, ast.Name) and node is not value else None


def _narrows(value: ast.expr, name: str) -> bool:
    """``name.where(...).order_by(...)``: generative methods of a statement on ``name``
    itself (``_library.NARROWING``), which keep the statement's kind."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr not in NARROWING:
            return False
        value = value.func.value
        if isinstance(value, ast.Name):
            return value.id == name
    return False


def _returned_queryset(body: list[ast.stmt], resolver: Resolver, own: Own | None) -> str:
    """``return Tag.objects.filter(...)`` / ``return self.__class__.objects.all()`` (directly
    or through a local) on every return: a queryset of that model's rows, ``Tag.objects``."""
    models: set[str] = set()
    for stmt in body:
        if not isinstance(stmt, ast.Return) or stmt.value is None:
            continue
        value = stmt.value
        values = _local_values(body, value.id) if isinstance(value, ast.Name) else [value]
        for each in values:
            model = queryset_model(each, resolver, own=own)
            if not model:
                return ""
            models.add(model)
    return f"{models.pop()}.objects" if len(models) == 1 else ""


SUPER = "super:"  # ``super:pkg.C.m()``: what ``super().m()`` returns in a method of C
_PK = re.compile(r"^(pk|id|\w+_ptr(_id)?)$")


def _fresh_return(body: list[ast.stmt], resolver: Resolver, own: Own | None) -> str:
    """A helper that returns a new instance it builds without a primary key
    (``change = Change(action=a); ...; return change``): the class, so that
    ``helper().save()`` is known to insert a row. One that returns what another helper
    returns (``return super().to_change()``, ``return self._build()``) gives that
    helper's result (``"super:pkg.C.to_change()"``, ``"pkg.C._build()"``), for the index. ``return None``
    branches do not count; any other return makes it "" (not known to be new)."""
    found: set[str] = set()
    for stmt in body:
        if not isinstance(stmt, ast.Return):
            continue
        value = stmt.value
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            continue
        values = _local_values(body, value.id) if isinstance(value, ast.Name) else [value]
        for each in values:
            made = _new_value(each, resolver, own) if isinstance(each, ast.Call) else ""
            if not made:
                return ""
            found.add(made)
    return found.pop() if len(found) == 1 else ""


def _new_value(call: ast.Call, resolver: Resolver, own: Own | None) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        receiver = func.value
        if isinstance(receiver, ast.Call) and _is_super(receiver) and own is not None:
            # what the next class of the instance's MRO defines: the index knows the bases
            return f"{SUPER}{own[1]}.{func.attr}()"
        if isinstance(receiver, ast.Name) and own is not None and receiver.id == own[0]:
            return f"{own[1]}.{func.attr}()"
    binding = binding_for_value(call, resolver)
    if binding.kind is not BindingKind.INSTANCE or binding.node is not call:
        return ""
    target = resolver.expr(func).target
    if target != binding.target or not capitalised(target) or target.startswith(_UNTYPED_RETURNS):
        return ""  # built by a factory or a helper, not by calling the class
    if call.args or any(k.arg is None or _PK.match(k.arg) for k in call.keywords):
        return ""  # a primary key from the inputs: saving it updates that row
    return target


def _is_super(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "super"


def _local_values(body: list[ast.stmt], name: str) -> list[ast.expr]:
    """The values of the plain assignments to ``name`` in the body (none: unknown)."""
    values = [
        stmt.value
        for stmt in body
        if isinstance(stmt, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
    ]
    return values or [ast.Constant(None)]


def _declare(stmt: ast.stmt, summary: FileSummary, scope: Scope) -> None:
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        for local, target in bindings_of(stmt, summary.module, summary.is_package):
            if local == "*":
                summary.star_imports.append(target)
            else:
                summary.imports[local] = target
                scope.names[local] = Binding(BindingKind.IMPORT, target)
    elif isinstance(stmt, _DEFS):
        # the def itself: ``f.submit()`` on an ``@executor.job`` function reads its decorators
        scope.names[stmt.name] = Binding(
            BindingKind.FUNCTION, f"{scope.prefix}.{stmt.name}", node=stmt
        )
    elif isinstance(stmt, ast.ClassDef):
        scope.names[stmt.name] = Binding(BindingKind.CLASS, f"{scope.prefix}.{stmt.name}")


def _assign(
    stmt: ast.Assign | ast.AnnAssign, summary: FileSummary, scope: Scope, resolver: Resolver
) -> None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if not names or stmt.value is None:
        return
    if "__all__" in names:
        summary.all_names = _literal_names(stmt.value)
        return
    table = _dispatch_table(stmt.value, resolver)
    if table:
        summary.tables.update(dict.fromkeys(names, table))
    values = table_values(stmt.value, resolver) if scope.kind is ScopeKind.MODULE else ""
    for name in names if values else []:
        summary.assignments[f"{name}{TABLE}"] = values
        scope.names[f"{name}{TABLE}"] = Binding(BindingKind.OTHER, values)
    binding = _type_alias(stmt.value, resolver, scope) or binding_for_value(stmt.value, resolver)
    made = module_set(stmt.value, resolver) if scope.kind is ScopeKind.MODULE else ""
    if made and binding.kind is BindingKind.OTHER:
        binding = Binding(BindingKind.INSTANCE, made)  # ``SEEN = set()``: a set, as annotated
    held = held_binding(stmt.annotation, resolver) if isinstance(stmt, ast.AnnAssign) else None
    proxy = binding.kind is BindingKind.INSTANCE and binding.target in PROXIES
    if (binding.kind is BindingKind.OTHER or proxy) and isinstance(stmt, ast.AnnAssign):
        # ``session: SessionMixin = LocalProxy(_cv_request, "session")``: what the proxy stands
        # for is what its annotation says (flask.globals), not the proxy class
        binding = _annotated(stmt.annotation, resolver, binding)
    for name in names:
        if held is not None:
            scope.names[f"{name}{HELD}"] = held
        scope.names[name] = binding
        if binding.kind in _ALIASES or binding.kind is BindingKind.INSTANCE:
            # An instance stands for its class: ``mailer.send()`` elsewhere resolves to
            # ``Mailer.send``, the method that runs.
            summary.assignments[name] = public_name(binding.target, summary.module)
        elif _made_by_call(binding, scope):
            # ``manager = make_manager()``: the object the function returns, wherever the
            # function is (its annotation, or the class every return builds), as a local
            # ``m = make_manager()`` is; the index reads ``make_manager()`` in its module.
            summary.assignments[name] = public_name(binding.target, summary.module)


def _branch_bound(
    body: list[ast.stmt], top: list[ast.stmt], module: str, is_package: bool
) -> set[str]:
    """Module names bound by more than one statement, one of them inside a block (see
    ``BRANCHED``); names bound twice at the top level hold the last one, as Python reads."""
    outer = {id(stmt) for stmt in body}
    count: dict[str, int] = {}
    nested: set[str] = set()
    for stmt in top:
        for name in _bound_names(stmt, module, is_package):
            count[name] = count.get(name, 0) + 1
            if id(stmt) not in outer:
                nested.add(name)
    return {name for name in nested if count[name] > 1}


def _bound_names(stmt: ast.stmt, module: str, is_package: bool) -> list[str]:
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return [local for local, _ in bindings_of(stmt, module, is_package) if local != "*"]
    if isinstance(stmt, (*_DEFS, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [stmt.target.id] if isinstance(stmt.target, ast.Name) else []
    return []


_SWAPPABLE = (BindingKind.ALIAS, BindingKind.CALLABLE, BindingKind.FUNCTION)


def rebound_after_definition(
    tree: ast.Module, module: str, is_package: bool
) -> dict[str, list[int]]:
    """Each function defined at module level or in a top-level class body whose name a later
    statement of that body binds again (``send = logged(send)``, a second ``def send`` in
    another branch, ``from x import send``): the first definition's line, then those
    statements' lines. Statements under ``if TYPE_CHECKING:`` never run and do not count."""
    found: dict[str, list[int]] = {}
    _rebound_in(tree.body, "", module, is_package, found)
    for stmt in _statements(tree.body, checking=False):
        if isinstance(stmt, ast.ClassDef):
            _rebound_in(stmt.body, f"{stmt.name}.", module, is_package, found)
    return found


def _rebound_in(
    body: list[ast.stmt], prefix: str, module: str, is_package: bool, found: dict[str, list[int]]
) -> None:
    defined: dict[str, int] = {}
    for stmt in sorted(_statements(body, checking=False), key=lambda s: s.lineno):
        for name in _bound_names(stmt, module, is_package):
            first = defined.get(name)
            if first is not None and stmt.lineno > first:
                found.setdefault(f"{prefix}{name}", [first]).append(stmt.lineno)
        if isinstance(stmt, _DEFS):
            defined.setdefault(stmt.name, stmt.lineno)


def _rebound_callables(tree: ast.Module, summary: FileSummary, scope: Scope) -> None:
    """``writer = to_tsv`` at module level, and ``global writer; writer = to_csv`` in a
    function (a set-up that picks an implementation): which callable the name holds when a
    request runs is only known at run time, so it is no alias of the first one (a spawn of
    it rewritten as the first one's job would break, or run the wrong one)."""
    rebound = _assigned_globals(tree)
    for name in rebound:
        binding = scope.names.get(name)
        if binding is not None and (binding.kind in _SWAPPABLE or binding.choices):
            scope.names[name] = Binding(BindingKind.OTHER)
            summary.assignments.pop(name, None)


def _assigned_globals(tree: ast.Module) -> set[str]:
    """Module names a function declares ``global`` and binds."""
    nodes = walk(tree)
    found: set[str] = set()
    if not any(isinstance(node, ast.Global) for node in nodes):
        return found
    for node in nodes:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        declared = {n for s in own_nodes(node) if isinstance(s, ast.Global) for n in s.names}
        if not declared:
            continue
        found |= {
            s.id
            for s in own_nodes(node)
            if isinstance(s, ast.Name) and isinstance(s.ctx, ast.Store) and s.id in declared
        }
    return found


def _made_by_call(binding: Binding, scope: Scope) -> bool:
    """A module-level name bound to what a named callable returns (``returned_by``)."""
    return (
        scope.kind is ScopeKind.MODULE
        and binding.kind is BindingKind.OTHER
        and binding.target.endswith("()")
        and binding.target.count("()") == 1
    )


def _type_alias(value: ast.expr, resolver: Resolver, scope: Scope) -> Binding | None:
    """``Config = dict[str, Any]`` (or ``Mapping[...]``, ``list[Job]``...) at module level: a
    type alias of the builtin container, so ``config.get(...)`` on a parameter annotated
    ``Config`` is ``dict.get``, not a method of an unknown ``Config``."""
    if scope.kind is not ScopeKind.MODULE or not isinstance(value, ast.Subscript):
        return None
    container, _ = container_annotation(value, resolver)
    return Binding(BindingKind.ALIAS, container) if container else None


def _dispatch_table(value: ast.expr, resolver: Resolver) -> list[str]:
    """``{"a": fa, "b": mod.fb}``: the values' dotted names, when every value is a name
    (a table of callables: calling an entry runs one of them). Else empty."""
    if not isinstance(value, ast.Dict) or not value.values:
        return []
    found = [
        resolver.dotted(v) if isinstance(v, ast.Name | ast.Attribute) else None
        for v in value.values
    ]
    return [name for name in found if name] if all(found) else []


_REGISTERING = frozenset({"update", "setdefault", "__setitem__"})


def _drop_registries(tree: ast.Module, summary: FileSummary) -> None:
    """A table the module adds to (``HANDLERS[k] = f``, ``HANDLERS.update(...)``) is a
    registry: what a call through it runs is only known at run time."""
    for node in walk(tree):
        written = _added_to(node)
        if isinstance(written, ast.Name):
            summary.tables.pop(written.id, None)
            summary.assignments.pop(f"{written.id}{TABLE}", None)


def _added_to(node: ast.AST) -> ast.expr | None:
    """What ``NAME[k] = v`` / ``del NAME[k]`` / ``NAME.update(...)`` adds to, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
        return node.value
    if isinstance(node, ast.Attribute) and node.attr in _REGISTERING:
        return node.value
    return None


def _annotated(annotation: ast.expr, resolver: Resolver, fallback: Binding) -> Binding:
    rtype = annotation_type(annotation, resolver)
    return Binding(BindingKind.INSTANCE, rtype) if rtype else fallback


def _literal_names(value: ast.expr) -> list[str] | None:
    if not isinstance(value, ast.List | ast.Tuple):
        return None
    names = [
        clean(e.value)
        for e in value.elts
        if isinstance(e, ast.Constant) and isinstance(e.value, str)
    ]
    return names if len(names) == len(value.elts) else None


def class_attributes(node: ast.ClassDef, resolver: Resolver, qualname: str = "") -> dict[str, str]:
    """``self.x = Ctor()`` / ``self.x = param`` (annotated) in any method; ``x = Ctor()`` in the body;
    ``parent = ForeignKey("self", ...)`` in model ``qualname``: ``self.parent`` is one of its rows."""
    found: dict[str, str] = {}
    classes = held_classes(node, resolver, union_type)  # ``self.mail_cls = MailUtil``
    for stmt in node.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            _attribute(stmt, resolver, {}, found, self_name=None)
            _value_class(stmt, resolver, found)
            _recursive_relation(stmt, resolver, qualname, found)
        elif isinstance(stmt, _DEFS) and stmt.args.args:
            params = _param_types(stmt, resolver)
            self_name = stmt.args.args[0].arg
            local = Scope(ScopeKind.FUNCTION, "", parent=resolver.scope)
            for inner in statements(stmt.body):
                if isinstance(inner, ast.Assign | ast.AnnAssign):
                    _attribute(inner, resolver, params, found, self_name, classes, local)
                    _bind_local(inner, resolver, local)
    for name, (kind, held) in _containers(node, resolver).items():
        found.setdefault(name, kind)
        if held and found[name] == kind:
            found[f"{name}{HELD}"] = held
    return found


def _recursive_relation(
    stmt: ast.Assign | ast.AnnAssign, resolver: Resolver, qualname: str, found: dict[str, str]
) -> None:
    """``parent = models.ForeignKey("self", ...)`` (Django's recursive relationship, a
    OneToOneField alike): the attribute holds a row of the class itself."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if not qualname or len(names) != 1 or not isinstance(stmt.value, ast.Call):
        return
    ctor = resolver.dotted(stmt.value.func) or ""
    to = _field_to(stmt.value)
    recursive = isinstance(to, ast.Constant) and to.value == "self"
    if recursive and _model_field(ctor) and ctor.endswith(_RELATIONS):
        found[names[0]] = qualname


def held_parameters(node: ast.ClassDef, qualname: str) -> dict[str, str]:
    """``self.client = client`` in a method (``client`` an unannotated parameter):
    attribute -> ``"<method qualname>:client"``, for the classifier to type once the
    method's callers type the parameter. An attribute set from two different parameters
    (or by two methods) is left out: which one it holds is not known."""
    found: dict[str, str] = {}
    clashes: set[str] = set()
    for stmt in node.body:
        if not isinstance(stmt, _DEFS) or not stmt.args.args:
            continue
        args = stmt.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs][1:]}
        untyped = {
            a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.annotation is None
        }
        self_name = (
            args.args[0].arg if args.args else (args.posonlyargs[0].arg if args.posonlyargs else "")
        )
        for inner in statements(stmt.body):
            if not isinstance(inner, ast.Assign) or len(inner.targets) != 1:
                continue
            name = _attribute_name(inner.targets[0], self_name)
            value = inner.value
            if name is None or not isinstance(value, ast.Name):
                continue
            if value.id not in params or value.id not in untyped:
                continue
            held = f"{qualname}.{stmt.name}:{value.id}"
            if found.setdefault(name, held) != held:
                clashes.add(name)
    return {k: v for k, v in found.items() if k not in clashes}


_CONTAINER_CALLS = frozenset({"builtins.dict", "builtins.list", "builtins.set"})
# The mutable containers among the literals _values types: what ``self.x = []`` makes.
_CONTAINER_LITERALS = {k: v for k, v in LITERALS.items() if v in _CONTAINER_CALLS}


_CONTAINERS: dict[int, tuple[ast.ClassDef, dict[str, tuple[str, str]]]] = {}


def _containers(node: ast.ClassDef, resolver: Resolver) -> dict[str, tuple[str, str]]:
    """Memoised per class of the file being read (two passes ask): see _containers_of."""
    cached = _CONTAINERS.get(id(node))
    if cached is None or cached[0] is not node:
        cached = _CONTAINERS[id(node)] = (node, _containers_of(node, resolver))
    return cached[1]


def _containers_of(node: ast.ClassDef, resolver: Resolver) -> dict[str, tuple[str, str]]:
    """``self.logs = []`` / ``self.seen = set()`` / ``self.jobs: dict[str, Job] = {}``:
    attributes that are builtin containers, with the class of their values when annotated.
    Annotated (in a method or the class body): the annotation's container. Otherwise only
    when every assignment of the attribute in the class is a literal of the same builtin
    (``self.logs = cache.get(key)`` elsewhere could make it anything)."""
    declared: dict[str, tuple[str, str]] = {}
    made: dict[str, set[str]] = {}
    holds: dict[str, set[str]] = {}  # the values' class, per assignment from a parameter
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            kind, held = container_annotation(stmt.annotation, resolver)
            if kind:
                declared.setdefault(stmt.target.id, (kind, held))
        if not isinstance(stmt, _DEFS) or not stmt.args.args:
            continue
        self_name = stmt.args.args[0].arg
        params = _container_params(stmt, resolver)
        for inner in statements(stmt.body):
            if isinstance(inner, ast.AnnAssign):
                name = _attribute_name(inner.target, self_name)
                kind, held = container_annotation(inner.annotation, resolver)
                if name is not None and kind:
                    declared.setdefault(name, (kind, held))
                if name is not None and inner.value is not None:
                    made.setdefault(name, set()).add(_literal_kind(inner.value, resolver))
            elif isinstance(inner, ast.Assign):
                for target in inner.targets:
                    for part in (
                        target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                    ):
                        name = _attribute_name(part, self_name)
                        if name is None:
                            continue
                        value = inner.value if part is target else None
                        if isinstance(value, ast.Name) and value.id in params:
                            # ``self.jobs = jobs`` with ``jobs: list[Job]``: its container
                            kind, held = params[value.id]
                            made.setdefault(name, set()).add(kind)
                            holds.setdefault(name, set()).add(held)
                            continue
                        kind = _literal_kind(inner.value, resolver) if part is target else ""
                        made.setdefault(name, set()).add(kind)
    found = dict(declared)
    for name, kinds in made.items():
        if name not in found and len(kinds) == 1 and "" not in kinds:
            # every assignment agrees on the builtin; the values' class when every
            # assignment from an annotated parameter names the same one (and no literal
            # assignment adds others: a literal ``[]`` holds nothing yet)
            held_classes = holds.get(name, {""})
            found[name] = (kinds.pop(), held_classes.pop() if len(held_classes) == 1 else "")
    return found


def _container_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolver: Resolver
) -> dict[str, tuple[str, str]]:
    """The parameters annotated with a builtin container: (container, class of its values)."""
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    found = {a.arg: container_annotation(a.annotation, resolver) for a in every if a.annotation}
    return {name: pair for name, pair in found.items() if pair[0]}


def _literal_kind(value: ast.expr, resolver: Resolver) -> str:
    literal = _CONTAINER_LITERALS.get(type(value))
    if literal is not None:
        return literal
    if isinstance(value, ast.Call) and not value.args and not value.keywords:
        target = resolver.dotted(value.func) or ""
        return target if target in _CONTAINER_CALLS else ""
    return ""


def _held_attributes(node: ast.ClassDef, resolver: Resolver) -> dict[str, str]:
    """attribute -> the class of the values it holds, for the annotated containers."""
    return {name: held for name, (_, held) in _containers(node, resolver).items() if held}


def returned_attributes(node: ast.ClassDef, resolver: Resolver) -> dict[str, str]:
    """``self.store = get_store()`` in a method: ``store`` -> ``"pkg.get_store()"``, for the
    index to type when get_store's module knows what it returns (see ``returned_by``)."""
    found: dict[str, str] = {}
    for stmt in node.body:
        if not isinstance(stmt, _DEFS) or not stmt.args.args:
            continue
        self_name = stmt.args.args[0].arg
        for inner in statements(stmt.body):
            if not isinstance(inner, ast.Assign) or not isinstance(inner.value, ast.Call):
                continue
            returned = binding_for_value(inner.value, resolver)
            if returned.kind is not BindingKind.OTHER or not returned.target:
                continue
            if returned.target.startswith("?"):
                continue  # what a method of an object of unknown type returns
            for target in inner.targets:
                name = _attribute_name(target, self_name)
                if name is not None:
                    found.setdefault(name, returned.target)
    return found


def _param_types(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolver: Resolver
) -> dict[str, str]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return {
        a.arg: t
        for a in every
        if a.annotation is not None and (t := annotation_type(a.annotation, resolver))
    }


def _attribute(
    stmt: ast.Assign | ast.AnnAssign,
    resolver: Resolver,
    params: dict[str, str],
    found: dict[str, str],
    self_name: str | None,
    held: dict[str, str] | None = None,
    local: Scope | None = None,
) -> None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for target in targets:
        name = _attribute_name(target, self_name)
        if name is None:
            continue
        made = made_by_attribute(stmt.value, self_name, held or {})
        rtype = made or _value_type(stmt, resolver, params) or _local_made(stmt, resolver, local)
        if rtype:
            found[name] = rtype


def _value_class(
    stmt: ast.Assign | ast.AnnAssign, resolver: Resolver, found: dict[str, str]
) -> None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if stmt.value is None or not any(
        isinstance(t, ast.Name) and t.id == "attr_class" for t in targets
    ):
        return
    named = isinstance(stmt.value, ast.Name | ast.Attribute)
    found[ATTR_CLASS] = (resolver.dotted(stmt.value) or "?") if named else "?"


def _local_made(stmt: ast.Assign | ast.AnnAssign, resolver: Resolver, local: Scope | None) -> str:
    """``loop = asyncio.get_running_loop(); self._handle = loop.call_later(...)``: a call on
    a local the method typed earlier (``_bind_local``) makes what that type's method makes
    (an ``asyncio.TimerHandle``). Only calls on such a local: every other value is typed as
    the class-level pass types it (``_value_type``)."""
    value = stmt.value
    if local is None or not isinstance(value, ast.Call):
        return ""
    root, _ = attribute_chain(value.func)
    if not isinstance(root, ast.Name) or root.id not in local.names:
        return ""
    binding = _in_scope(value, resolver, local)
    return binding.target if binding.kind is BindingKind.INSTANCE else ""


def _bind_local(stmt: ast.Assign | ast.AnnAssign, resolver: Resolver, local: Scope) -> None:
    """``name = <call>`` in a method, read in order: typed when the call makes an instance
    of a known class (capitalised), else shadowed (a later call on it is not typed)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if not names:
        return
    binding = Binding(BindingKind.OTHER)
    if isinstance(stmt.value, ast.Call):
        made = _in_scope(stmt.value, resolver, local)
        if made.kind is BindingKind.INSTANCE and capitalised(made.target):
            binding = Binding(BindingKind.INSTANCE, made.target)
    for name in names:
        local.names[name] = binding


def _in_scope(value: ast.Call, resolver: Resolver, local: Scope) -> Binding:
    outer, resolver.scope = resolver.scope, local
    try:
        return binding_for_value(value, resolver)
    finally:
        resolver.scope = outer


def _attribute_name(target: ast.expr, self_name: str | None) -> str | None:
    if self_name is None:
        return target.id if isinstance(target, ast.Name) else None
    if (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == self_name
    ):
        return target.attr
    return None


def _value_type(
    stmt: ast.Assign | ast.AnnAssign, resolver: Resolver, params: dict[str, str]
) -> str:
    if isinstance(stmt, ast.AnnAssign):
        annotated = annotation_type(stmt.annotation, resolver)
        if annotated:
            return annotated
    value = stmt.value
    if isinstance(value, ast.BoolOp | ast.IfExp) and value is not None:
        return _defaulted_type(value, resolver, params)
    if isinstance(value, ast.Name) and value.id in params:
        return params[value.id]
    if isinstance(value, ast.Call):
        binding = binding_for_value(value, resolver)
        if binding.kind is BindingKind.INSTANCE and _model_field(binding.target):
            return _related_model(value, resolver, binding.target)
        if binding.kind in (BindingKind.INSTANCE, BindingKind.FILE):
            return binding.target
    return ""


def _defaulted_type(
    value: ast.BoolOp | ast.IfExp, resolver: Resolver, params: dict[str, str]
) -> str:
    """``self.cache = cache or InMemoryCache()``, ``InMemoryCache() if cache is None else
    cache``: a default for a value of one type keeps the type, when every operand whose
    type is known (an annotated parameter, a constructor) has the same one. When every
    operand's type is known (``None`` aside), the value is one of them: their union."""
    if isinstance(value, ast.BoolOp):
        if not isinstance(value.op, ast.Or):
            return ""
        operands = value.values
    else:
        operands = [value.body, value.orelse]
    found: list[str] = []
    for operand in operands:
        if isinstance(operand, ast.Constant) and operand.value is None:
            continue
        if isinstance(operand, ast.Name) and operand.id in params:
            found.append(params[operand.id])
        elif isinstance(operand, ast.Call):
            binding = binding_for_value(operand, resolver)
            known = binding.kind is BindingKind.INSTANCE and not _model_field(binding.target)
            found.append(binding.target if known else "")
        else:
            found.append("")
    if found and all(found):
        return union_type(found)
    types = {t for t in found if t}
    return types.pop() if len(types) == 1 else ""


_FIELD_MODULES = ("django.db.models.", "django.contrib.", "modelcluster.", "taggit.")
_FILE_FIELDS = {
    ".FileField": "django.db.models.fields.files.FieldFile",
    ".ImageField": "django.db.models.fields.files.ImageFieldFile",
}
_RELATIONS = ("ForeignKey", "OneToOneField", "ParentalKey")


def _model_field(ctor: str) -> bool:
    """``models.ForeignKey(...)``, ``models.CharField(...)``: a descriptor, not the value type."""
    last = ctor.rpartition(".")[2]
    return ctor.startswith(_FIELD_MODULES) and last.endswith(("Field", "Key"))


def _related_model(call: ast.Call, resolver: Resolver, ctor: str) -> str:
    """``ticket = models.ForeignKey(Ticket, ...)``: ``self.ticket`` is a Ticket;
    ``ForeignKey("desk.Ticket", ...)`` (an app label and a model name) is the project model
    the index finds by that name (``MODEL_LOADED``), as for ``get_model("desk", "Ticket")``;
    other fields (and other strings: ``"self"``, a bare name) give no type, but a
    ``FileField`` / ``ImageField``, whose value is Django's ``FieldFile`` /
    ``ImageFieldFile`` (``instance.file.delete()`` removes the stored file)."""
    for field, value in _FILE_FIELDS.items():
        if ctor.endswith(field):
            return value
    if not ctor.endswith(_RELATIONS):
        return ""
    return _named_model(_field_to(call), resolver)


def _field_to(call: ast.Call) -> ast.expr | None:
    """The model a relation field points to: its ``to=`` or its first argument."""
    to = next((k.value for k in call.keywords if k.arg == "to"), None)
    return call.args[0] if to is None and call.args else to


def _named_model(to: ast.expr | None, resolver: Resolver) -> str:
    """A model named by a class (``Ticket``), or by ``"app_label.Model"`` (``MODEL_LOADED``,
    which the index resolves); "" for anything else."""
    if isinstance(to, ast.Name | ast.Attribute):
        return resolver.dotted(to) or ""
    if isinstance(to, ast.Constant) and isinstance(to.value, str):
        app, _, model = to.value.rpartition(".")
        if app.isidentifier() and model.isidentifier():
            return f"{MODEL_LOADED}{app}.{model}"
        if not app and model.isidentifier() and model != "self":
            # ``ManyToManyField("Tag")``: Django reads a bare name as a model of the same
            # app (one not defined yet): this module's class of that name, else the app's.
            if resolver.scope.lookup(model) is not None:
                return resolver.dotted(ast.Name(id=model)) or ""
            label = _app_label(resolver.module)
            return f"{MODEL_LOADED}{label}.{model}" if label else ""
    return ""


def _app_label(module: str) -> str:
    """The app a models module belongs to, as Django labels it by default (the last part
    of the app's package): ``shop`` for ``pkg.shop.models`` and ``pkg.shop.models.orders``."""
    parts = module.split(".")
    if "models" in parts[1:]:
        return parts[parts.index("models", 1) - 1]
    return parts[-2] if len(parts) > 1 else ""


_REVERSED = ("ForeignKey", "ParentalKey", "ManyToManyField", "ParentalManyToManyField")


def reverse_relations(node: ast.ClassDef, qualname: str, resolver: Resolver) -> dict[str, str]:
    """``parent = ForeignKey(Node, related_name="children")`` in model Leaf: ``children``
    -> Node (``node.children`` is a manager of Leaf rows); without a related_name the
    manager is ``leaf_set``; ``"self"`` is the class itself. A related_name of ``"+"`` (no
    reverse manager) or one with ``%(class)s`` placeholders gives nothing; the model is a
    class, ``"app_label.Model"`` or a bare ``"Model"`` of the same app (``_named_model``)."""
    found: dict[str, str] = {}
    for stmt in node.body:
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
            continue
        call = stmt.value
        ctor = resolver.dotted(call.func) or ""
        if not _model_field(ctor) or not ctor.endswith(_REVERSED):
            continue
        to = _field_to(call)
        if isinstance(to, ast.Constant) and to.value == "self":
            model = qualname
        else:
            model = _named_model(to, resolver)  # a class, "app.Model" or a bare "Model"
        named = next((k.value for k in call.keywords if k.arg == "related_name"), None)
        if isinstance(named, ast.Constant) and isinstance(named.value, str):
            name = named.value
        else:
            name = "" if named is not None else f"{node.name.lower()}_set"
        if model and name.isidentifier():
            # Two ForeignKeys of one model without related_name (to Set and to App) give each
            # target a ``leaf_set``: one key per target (``leaf_set#2``), the index reads both.
            key, n = name, 1
            while key in found and found[key] != model:
                n += 1
                key = f"{name}{RELATED_AGAIN}{n}"
            found[key] = model
    return found


# ``leaf_set#2`` in ``ClassInfo.related``: the same reverse manager name, for another model.
RELATED_AGAIN = "#"


_MANY = ("ManyToManyField", "ParentalManyToManyField")


def many_to_many(node: ast.ClassDef, qualname: str, resolver: Resolver) -> dict[str, str]:
    """``tags = models.ManyToManyField(Tag)`` in a model: ``obj.tags`` is a manager of Tag
    rows (``"self"``: the class itself; ``"shop.Tag"``, an app label and a model name: the
    project model of that name, as for a ForeignKey)."""
    found: dict[str, str] = {}
    for stmt in node.body:
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
            continue
        names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        ctor = resolver.dotted(stmt.value.func) or ""
        if len(names) != 1 or not _model_field(ctor) or not ctor.endswith(_MANY):
            continue
        to = _field_to(stmt.value)
        self_ = isinstance(to, ast.Constant) and to.value == "self"
        model = qualname if self_ else _named_model(to, resolver)
        if model:
            found[names[0]] = model
    return found


def form_model(node: ast.ClassDef, resolver: Resolver) -> str:
    """``class Meta: model = Skill`` in a class body (a Django ``ModelForm``'s): the model
    whose instance ``form.save()`` saves, locally resolved; "" when there is none."""
    for stmt in node.body:
        if not isinstance(stmt, ast.ClassDef) or stmt.name != "Meta":
            continue
        for inner in stmt.body:
            if (
                isinstance(inner, ast.Assign)
                and len(inner.targets) == 1
                and isinstance(inner.targets[0], ast.Name)
                and inner.targets[0].id == "model"
                and isinstance(inner.value, ast.Name | ast.Attribute)
            ):
                return resolver.dotted(inner.value) or ""
    return ""


# What a generic view's default ``get_queryset`` reads (Django's ``SingleObjectMixin``:
# ``self.queryset``, else ``self.model._default_manager.all()``; DRF's ``GenericAPIView``:
# ``self.queryset``), and the managers a ``queryset = X.objects.filter(...)`` starts from.
_VIEW_MODEL = "model"
_VIEW_QUERYSET = "queryset"
_MANAGERS = frozenset({"objects", "_default_manager"})


def view_model(node: ast.ClassDef, resolver: Resolver) -> str:
    """``model = Order`` or ``queryset = Order.objects.filter(...)`` in a class body (a
    generic view's): the model whose row its ``get_object()`` returns, locally resolved;
    "" when there is none (``model`` wins, as ``get_queryset`` reads ``queryset`` first but
    both name one model in practice)."""
    found = {}
    for stmt in node.body:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in (_VIEW_MODEL, _VIEW_QUERYSET)
        ):
            continue
        value: ast.expr = stmt.value
        if stmt.targets[0].id == _VIEW_QUERYSET:
            while isinstance(value, ast.Call | ast.Attribute) and not (
                isinstance(value, ast.Attribute) and value.attr in _MANAGERS
            ):
                value = value.func if isinstance(value, ast.Call) else value.value
            if not isinstance(value, ast.Attribute):
                continue
            value = value.value
        if isinstance(value, ast.Name | ast.Attribute):
            found[stmt.targets[0].id] = resolver.dotted(value) or ""
    return found.get(_VIEW_MODEL) or found.get(_VIEW_QUERYSET) or ""


def thread_like(bases: list[str], classes: dict[str, ClassCtx]) -> bool:
    return any(b == "threading.Thread" or (b in classes and classes[b].thread_like) for b in bases)
