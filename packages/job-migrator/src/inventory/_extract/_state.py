"""Per-function state of the walk, and how each call's value is used by its parent."""

from __future__ import annotations

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
    consumer: bool = False  # runs a ``while True`` loop that consumes a queue or socket
    # ``self.coro = coro`` / ``fn = func``: the name as written -> the parameter it holds
    param_aliases: dict[str, str] = field(default_factory=dict)

    @property
    def qualname(self) -> str | None:
        return self.info.qualname if self.info else None

    def watch_name(self, name: str) -> None:
        self.watch[name] = name
        self.method_uses.setdefault(name, [])
        self.loads.setdefault(name, [])
