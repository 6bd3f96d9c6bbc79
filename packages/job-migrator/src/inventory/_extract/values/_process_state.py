"""Writes to state this process holds in memory: what a worker would change its own copy of.

``TASKS.pop(task_id)``, ``CACHE[key] = value``, ``del SESSIONS[sid]``, ``os.environ["X"] =
v``, ``global _ready; _ready = True``: the function changes a module-level container (a
dict, list, set, deque... built at import) or a module global. In the process serving the
request, later requests see the change; run by a queue's worker, the job changes the
worker's copy and the web process never sees it (a task never forgotten, a registration
never made, a cache never invalidated). That is not a retry risk (a repeat converges) but
it decides whether the job may move (``codemods``: refused unless named), so each such
write is a ``MODULE_STATE`` fact, classified as a ``process_state`` effect.

A class is module-level state too: ``self.__class__._pk_map = {}``, ``cls._registry[k] =
v``, ``type(self)._cache.clear()``, ``Settings.loaded = True`` (a class of this module)
change the class every instance of the process shares, so they are ``MODULE_STATE`` facts
as well, named ``module.Class.attr``.

A memo is not counted: a function that also reads the container or global it adds to
(``if key not in CACHE: CACHE[key] = load(key)``; ``global _client; if _client is None:
_client = connect()``) fills a per-process cache any process may fill, and what it returns
does not depend on which one did. A removal (``pop``, ``del``, ``clear``...) always counts:
an entry evicted in a worker stays in the web process. Only names of this module (and
``os.environ``) are known to be containers here; the function's own locals and
parameters, and nested functions and lambdas, are not its writes.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator

from inventory._extract._resolve import Resolver
from inventory._extract._source import SourceText, span_of
from inventory.summary import Fact, FactKind

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# Methods of the builtin and collections containers that add to them / remove from them
# (``_classify._changes`` counts these and the ones that reorder as changing a container).
CONTAINER_ADDS = frozenset(
    {"append", "extend", "insert", "appendleft", "extendleft", "add", "update", "setdefault"}
)
CONTAINER_REMOVES = frozenset({"pop", "popitem", "popleft", "clear", "remove", "discard"})
# Constructors of in-memory containers, as the resolver names them.
_CONSTRUCTORS = frozenset(
    {f"builtins.{name}" for name in ("dict", "list", "set")}
    | {f"collections.{name}" for name in ("defaultdict", "OrderedDict", "deque", "Counter")}
    | {f"weakref.{name}" for name in ("WeakValueDictionary", "WeakKeyDictionary", "WeakSet")}
)
_ANNOTATIONS = frozenset(
    {"dict", "list", "set", "Dict", "List", "Set", "MutableMapping", "MutableSequence"}
    | {"MutableSet", "DefaultDict", "OrderedDict", "Deque", "Counter", "defaultdict", "deque"}
)
# Library containers that are process state: the environment of this process.
_LIBRARY_STATE = frozenset({"os.environ"})
# Library containers that are the request being served: Flask's and Quart's ``session``
# ("the session object works pretty much like an ordinary dict", of the current request's
# context). A write to it changes the cookie of that request's response: only the process
# serving it can, so it is a ``MODULE_STATE`` fact the classifier reads as a
# ``request_hook`` effect (as ``flash`` and ``after_this_request`` are).
REQUEST_STATE = frozenset({"flask.session", "quart.session"})
_NAMED_STATE = _LIBRARY_STATE | REQUEST_STATE
_LITERALS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def module_containers(tree: ast.Module, resolver: Resolver) -> frozenset[str]:
    """Names the module binds, at its top level, to an in-memory container (not dunders:
    ``__all__`` is no state)."""
    found: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and _container(stmt.value, None, resolver):
            found.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and _container(stmt.value, stmt.annotation, resolver)
        ):
            found.add(stmt.target.id)
    return frozenset(n for n in found if not (n.startswith("__") and n.endswith("__")))


def state_names(
    containers: frozenset[str], lines: list[str], imports: dict[str, str] | None = None
) -> frozenset[str]:
    """The names whose use in a function sends it to :func:`process_state_facts` (with a
    ``global`` statement): the module's containers, ``os`` / ``environ`` when the module
    names the environment at all, and the names it binds to a request's session (or to
    ``flask`` / ``quart`` themselves). Other functions are not walked again."""
    environ = any("environ" in line for line in lines)
    found = containers | {"os", "environ"} if environ else containers
    bound = imports or {}
    sessions = {n for n, t in bound.items() if t in REQUEST_STATE or t in ("flask", "quart")}
    return found | sessions


def _container(value: ast.expr | None, annotation: ast.expr | None, resolver: Resolver) -> bool:
    if isinstance(value, _LITERALS):
        return True
    if isinstance(value, ast.Call) and resolver.dotted(value.func) in _CONSTRUCTORS:
        return True
    if annotation is None:
        return False
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
    return name in _ANNOTATIONS


@dataclasses.dataclass(frozen=True, slots=True)
class ModuleOfState:
    """What a module offers the reading of each of its functions: its name and text, its
    containers (:func:`module_containers`), the classes it defines at its top level, and
    what one of them reads of itself, by qualified name (:func:`class_reads`, asked only
    when an item of a class attribute is set)."""

    module: str
    text: SourceText
    containers: frozenset[str]
    classes: frozenset[str] = frozenset()
    read_by_class: Callable[[str], frozenset[str]] | None = None


def process_state_facts(
    node: FunctionNode, resolver: Resolver, where: ModuleOfState, owner: str | None = None
) -> list[Fact]:
    """The function's own writes to module-level containers, globals and class attributes
    (see the module). ``owner``: the qualified name of the class the function is a method
    of."""
    containers, module, text = where.containers, where.module, where.text
    classes, read_by_class = where.classes, where.read_by_class
    body = list(own_nodes(node))
    declared = {n for s in body if isinstance(s, ast.Global) for n in s.names}
    local = _locals(node, body) - declared
    refs = _class_refs(node, owner, classes - local, module)
    writes: list[
        tuple[ast.stmt | ast.expr, str, bool, ast.AST]
    ] = []  # (where, name, removes, receiver)
    for item in body:
        if not isinstance(item, ast.stmt | ast.expr):
            continue
        for name, removes, receiver in _writes(item, declared, resolver):
            if name in _NAMED_STATE or (
                name not in local and (name in containers or name in declared)
            ):
                writes.append((item, name, removes, receiver))
        if refs:
            writes += [(item, *found) for found in _class_writes(item, refs)]
    if not writes:
        return []
    written = {id(receiver) for *_, receiver in writes}
    read = {n.id for n in body if isinstance(n, ast.Name) and _read(n, written)}
    for n in body:
        if isinstance(n, ast.Attribute) and id(n) not in written and isinstance(n.ctx, ast.Load):
            attribute = _class_attribute(n, refs)
            if attribute is not None:
                read.add(attribute)
    facts: list[Fact] = []
    for item, name, removes, receiver in writes:
        if not removes and name in read:
            continue  # a memo: filled where it is read
        cls, _, attribute = name.rpartition(".")
        if (
            not removes
            and read_by_class is not None
            and "." in cls
            and not _rebinds(item, receiver)
            and attribute in read_by_class(cls)
        ):
            continue  # a cache the class keeps: one method reads it, this one fills it
        target = name if name in _NAMED_STATE or "." in name else f"{module}.{name}"
        kind = FactKind.REQUEST_STATE if name in REQUEST_STATE else FactKind.MODULE_STATE
        facts.append(
            Fact(
                kind=kind,
                span=span_of(item),
                text=text.segment(item)[:200],
                target=target,
            )
        )
    return facts


def class_reads(node: ast.ClassDef) -> frozenset[str]:
    """The attributes a class's methods read through the instance or the class
    (``self._pk_map.get(k)``, ``cls._instance``, ``self.__class__._cache[k]``), other than
    as the container a write changes. A class attribute one method reads and another only
    fills (``get_pk_for_name`` reads ``_pk_map`` and hands ``_do_pk_cache_set`` the value to
    store) is a cache the class keeps: a memo, as one filled where it is read is."""
    written: set[int] = set()
    for item in ast.walk(node):
        if isinstance(item, ast.Subscript) and isinstance(item.ctx, ast.Store | ast.Del):
            written.add(id(item.value))
        elif (
            isinstance(item, ast.Call)
            and isinstance(item.func, ast.Attribute)
            and (item.func.attr in CONTAINER_ADDS or item.func.attr in CONTAINER_REMOVES)
        ):
            written.add(id(item.func.value))
    return frozenset(
        item.attr
        for item in ast.walk(node)
        if isinstance(item, ast.Attribute)
        and isinstance(item.ctx, ast.Load)
        and id(item) not in written
        and _on_instance_or_class(item.value, node.name)
    )


def _rebinds(item: ast.AST, receiver: ast.AST) -> bool:
    """``cls._cache = {}``: the write binds the attribute itself (a reset), not an item of it."""
    targets = item.targets if isinstance(item, ast.Assign) else []
    if isinstance(item, ast.AnnAssign | ast.AugAssign):
        targets = [item.target]
    return any(t is receiver for t in targets)


def _on_instance_or_class(value: ast.expr, name: str) -> bool:
    """``self`` / ``cls`` / the class's name, ``self.__class__``, ``type(self)``."""
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls", name)
    if isinstance(value, ast.Attribute):
        return value.attr == "__class__" and isinstance(value.value, ast.Name)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "type"
        and len(value.args) == 1
    )


def _class_refs(
    node: FunctionNode, owner: str | None, classes: frozenset[str], module: str
) -> dict[str, str]:
    """How the function names a class it may change, and that class's qualified name:
    ``self.__class__`` / ``type(self)`` / ``cls`` (the first parameter of a method of
    ``owner``) and the module's own classes by name."""
    refs = {name: f"{module}.{name}" for name in classes}
    params = [*node.args.posonlyargs, *node.args.args]
    if owner is not None and params:
        first = params[0].arg
        refs[f"{first}.__class__"] = owner
        refs[f"type({first})"] = owner
        if first == "cls":
            refs["cls"] = owner
    return refs


def _class_attribute(node: ast.Attribute, refs: dict[str, str]) -> str | None:
    """``module.Class.attr`` when ``node`` is an attribute of a class ``refs`` names."""
    owner = node.value
    if isinstance(owner, ast.Name):
        written = owner.id
    elif isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name):
        written = f"{owner.value.id}.{owner.attr}"
    elif (
        isinstance(owner, ast.Call)
        and isinstance(owner.func, ast.Name)
        and owner.func.id == "type"
        and len(owner.args) == 1
        and isinstance(owner.args[0], ast.Name)
    ):
        written = f"type({owner.args[0].id})"
    else:
        return None
    cls = refs.get(written)
    return f"{cls}.{node.attr}" if cls is not None else None


def _class_writes(
    item: ast.stmt | ast.expr, refs: dict[str, str]
) -> Iterator[tuple[str, bool, ast.AST]]:
    """(``module.Class.attr``, whether it removes, the node naming it) for a write to a class
    attribute: assigned, deleted, an item of it set or deleted, a container method called."""
    if isinstance(item, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
        targets = item.targets if isinstance(item, ast.Assign | ast.Delete) else [item.target]
        removes = isinstance(item, ast.Delete)
        for target in targets:
            named = target.value if isinstance(target, ast.Subscript) else target
            if isinstance(named, ast.Attribute):
                name = _class_attribute(named, refs)
                if name is not None:
                    # as for a global: ``cls._cache = {}`` counts unless the function also
                    # reads it (``if cls._client is None: cls._client = connect()``, a
                    # memo); ``cls.count += 1`` reads itself, and always counts
                    grows = named is target and isinstance(item, ast.AugAssign)
                    yield name, removes or grows, named
    elif isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute):
        method = item.func.attr
        receiver = item.func.value
        if (method in CONTAINER_ADDS or method in CONTAINER_REMOVES) and isinstance(
            receiver, ast.Attribute
        ):
            name = _class_attribute(receiver, refs)
            if name is not None:
                yield name, method in CONTAINER_REMOVES, receiver


def own_nodes(node: FunctionNode) -> Iterator[ast.AST]:
    """Every node of the function's body, not inside a nested function, class or lambda."""
    stack: list[ast.AST] = [*reversed(node.body)]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, _SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(item))))


def _locals(node: FunctionNode, body: list[ast.AST]) -> set[str]:
    args = node.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for item in body:
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store | ast.Del):
            names.add(item.id)
        elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(item.name)
        elif isinstance(item, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in item.names}
        elif isinstance(item, ast.ExceptHandler) and item.name:
            names.add(item.name)
    return names


def _writes(
    item: ast.stmt | ast.expr, declared: set[str], resolver: Resolver
) -> Iterator[tuple[str, bool, ast.AST]]:
    """(name written, whether it removes, the node naming it) for one node."""
    if isinstance(item, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
        targets = item.targets if isinstance(item, ast.Assign | ast.Delete) else [item.target]
        removes = isinstance(item, ast.Delete)
        for target in targets:
            if isinstance(target, ast.Subscript):
                name = _named(target.value, resolver)
                if name is not None:
                    yield name, removes, target.value
            elif isinstance(target, ast.Attribute):
                name = _named(target.value, resolver)  # ``session.permanent = True``
                if name in REQUEST_STATE:
                    yield name, True, target.value
            elif isinstance(target, ast.Name) and target.id in declared:
                # ``global x; x = ...``: a rebinding reads nothing; ``x += 1`` reads itself,
                # which is no memo (it counts), so it is a removal-like write.
                yield target.id, removes or isinstance(item, ast.AugAssign), target
    elif isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute):
        method = item.func.attr
        if method in CONTAINER_ADDS or method in CONTAINER_REMOVES:
            name = _named(item.func.value, resolver)
            if name is not None and name not in REQUEST_STATE:  # the catalogue says those
                yield name, method in CONTAINER_REMOVES, item.func.value


def _named(receiver: ast.expr, resolver: Resolver) -> str | None:
    if isinstance(receiver, ast.Name):
        dotted = resolver.dotted(receiver)  # ``from os import environ``
        return dotted if dotted in _NAMED_STATE else receiver.id
    if isinstance(receiver, ast.Attribute):
        dotted = resolver.dotted(receiver)
        return dotted if dotted in _NAMED_STATE else None
    return None


def _read(node: ast.Name, written: set[int]) -> bool:
    """A load of a name other than as the receiver of one of the writes."""
    return isinstance(node.ctx, ast.Load) and id(node) not in written
