"""Per-function state of the walk, and how each call's value is used by its parent."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import StrEnum

from inventory._extract._resolve import Resolver
from inventory.models import Framework
from inventory.summary import CallInfo, Fact, FunctionInfo, RawSite


class UseKind(StrEnum):
    """What the parent expression does with a value (set by the parent before the child is walked)."""

    DISCARDED = "discarded"  # an expression statement
    AWAITED_DISCARDED = "awaited_discarded"  # ``await call`` as a statement
    AWAITED = "awaited"  # awaited and the value used
    BOUND = "bound"  # assigned to, appended to, or added to ``name``
    RETURNED = "returned"
    ITERATED = "iterated"  # ``for x in call``, ``list(call)``
    WITH = "with"  # ``with call as name``: the context manager's exit runs at block end
    RECEIVER = "receiver"  # ``call.name(...)``
    WAITED = "waited"  # passed to gather / wait / as_completed / wait_for
    STORED = "stored"  # ``container[key] = call``: ``name`` is the container


@dataclass(slots=True)
class Use:
    kind: UseKind
    name: str = ""
    awaited: bool = False  # ``name = await call``


@dataclass(slots=True)
class Candidate:
    """A site whose fate depends on what the rest of the function does with its result."""

    site: RawSite
    bound: str | None = None  # the name the result (future, task, thread) is bound to
    waits: frozenset[str] = frozenset()  # methods on ``bound`` that wait for the work
    drop_when_waited: bool = False  # executors and tasks waited on in place are not background work
    iterator: bool = False  # Executor.map: iterating its result waits for the work
    start_lines: list[int] = field(default_factory=list)
    handoffs: list[str] = field(
        default_factory=list
    )  # names passed to a thread (an Event, a queue)


@dataclass(slots=True)
class Loop:
    forever: bool  # ``while True``
    broken: bool = False
    consumes: bool = False
    service: bool = False  # ``while not self._stop.is_set()``: runs until the process stops it
    blocks: bool = False  # waits each round: Event.wait, sleep
    paces: bool = False  # waits each round outside an ``except`` (not a retry's back-off)
    streams: bool = False  # ``async for x in source():`` in its body: reads a stream each round


@dataclass(slots=True)
class FunctionState:
    info: FunctionInfo | None  # None at module level and in class bodies
    resolver: Resolver
    handler: Framework | None = None
    params: frozenset[str] = frozenset()
    calls: list[CallInfo] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    watch: dict[str, str] = field(default_factory=dict)  # name -> the bound name it stands for
    method_uses: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    loads: dict[str, list[int]] = field(default_factory=dict)
    consumed: set[str] = field(default_factory=set)  # awaited, gathered, waited for
    iterated: set[str] = field(default_factory=set)
    loops: list[Loop] = field(default_factory=list)
    globals: set[str] = field(default_factory=set)
    # a name of the module's process state was seen (``Walker.state_names``): only then is
    # the function read for writes to it (``_process_state``)
    touches_state: bool = False
    # a name bound to a request proxy was seen (``Walker.request_names``): only then is the
    # function read again for its reads of the request being served
    reads_request: bool = False
    consumer: bool = False  # runs a ``while True`` loop that consumes a queue or socket
    # ``self.coro = coro`` / ``fn = func``: the name as written -> the parameter it holds
    param_aliases: dict[str, str] = field(default_factory=dict)
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the function walked
    # how many ``except`` handlers of this function enclose the statement being walked
    handlers: int = 0
    # the parameter an enclosing ``if p:`` of this function tests (``CallInfo.when_param``)
    guard: str = ""
    _bound_once: dict[str, bool] = field(default_factory=dict)

    def bound_once(self, name: str) -> bool:
        """``name`` is bound by exactly one statement of the function (no parameter, no
        second assignment, no loop or ``with`` target, no ``global`` / ``nonlocal`` rebinding
        it): what that statement binds is what every later read sees, loops included."""
        if self.node is None:
            return False
        found = self._bound_once.get(name)
        if found is None:
            found = self._bound_once[name] = _bindings(self.node, name) == 1
        return found

    @property
    def qualname(self) -> str | None:
        return self.info.qualname if self.info else None

    def watch_name(self, name: str) -> None:
        self.watch[name] = name
        self.method_uses.setdefault(name, [])
        self.loads.setdefault(name, [])


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bindings(node: ast.AST, name: str) -> int:
    """How many times ``name`` is bound in ``node``'s own scope (2 for "more than once" when
    a ``global`` or a nested function's ``nonlocal`` takes it over)."""
    count = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            count += child.name == name
            rebinds = any(isinstance(n, ast.Nonlocal) and name in n.names for n in ast.walk(child))
            count += 2 * rebinds
            continue
        if isinstance(child, ast.Lambda):
            continue
        if isinstance(child, _COMPREHENSIONS):  # its own scope, but ``:=`` binds out here
            count += sum(
                isinstance(n, ast.NamedExpr) and n.target.id == name for n in ast.walk(child)
            )
            continue
        if isinstance(child, ast.Name):
            count += child.id == name and isinstance(child.ctx, ast.Store | ast.Del)
        elif isinstance(child, ast.arg):
            count += child.arg == name
        elif isinstance(child, ast.alias):
            count += (child.asname or child.name.partition(".")[0]) == name
        elif isinstance(child, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
            count += child.name == name
        elif isinstance(child, ast.MatchMapping):
            count += child.rest == name
        elif isinstance(child, ast.Global | ast.Nonlocal):
            count += 2 * (name in child.names)
        count += _bindings(child, name)
    return count
