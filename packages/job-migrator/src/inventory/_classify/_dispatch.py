"""``self.m()``, ``cls.m()`` and ``x.m()`` on a receiver of a declared class: the method of
the receiver's class, overrides included (class hierarchy analysis).

A method of ``C`` runs on instances of ``C`` and of every class below it, so
``self.m()`` written in ``C`` runs, per Python's MRO, the ``m`` of the receiver's
class: ``C``'s own (or inherited) for a ``C``, an override for an instance of a
subclass that defines one. The call may run any of them: each is a callee, and
what any of them does is what the call may do (the verdict takes the worst). A
class with no subclass that overrides ``m`` runs only its own ``m``.

The same holds for any receiver whose class is *declared* rather than made at the call:
a parameter annotated ``backend: Backend``, what a factory annotated ``-> Backend`` returns,
an element of a ``list[Field]``, ``cls(...)`` in a classmethod. ``Backend(...).m()`` and
``x = Backend(...); x.m()`` run ``Backend``'s own ``m`` only, and ``super().m()`` the next
class's in the MRO: no dispatch there.

Only the project's classes are read (a library subclass of a project class is not
looked for); a hierarchy with more overrides than ``MAX_OVERRIDES`` is followed up to
that many and the rest is a gap (which one runs is only known at run time).

Last, callbacks: a project function handed to a library call the scan does not read is
called there.

``doc.build(story, onFirstPage=page_template)``, ``sorted(rows, key=rank)``,
``retry(fetch, attempts=3)``: a function passed to a library is passed to be called, and
what it does is part of what the call does. The library's source is not followed (or not
at hand), so without this the function's effects vanish from the caller: a silent miss.

Not a call: handing a function to what *stores* it for later (``signal.connect(f)``,
``app.add_url_rule(..., view_func=f)``, ``hooks.append(f)``, ``functools.partial(f)``) or
starts it in the background (``Thread(target=f)``, ``executor.submit(f)``,
``loop.call_later(f)``): those are registrations or job sites of their own
(``_extract.detectors``), and the call of a known site is never one of these edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from inventory._classify._index import SymbolKind
from inventory._classify._spawned import handed_root, spawned
from inventory.summary import ReceiverKind

if TYPE_CHECKING:
    from inventory._classify._index import SymbolIndex
    from inventory._classify._target import CallTarget
    from inventory.summary import CallInfo, FunctionInfo, RawSite

MAX_OVERRIDES = 16
_NOT_IMPLEMENTED = "NotImplementedError"
_SELF_NAMES = frozenset({"self", "cls"})
_ON_SELF = (ReceiverKind.SELF, ReceiverKind.CLASS)


@dataclass(frozen=True)
class Overrides:
    """What ``self.m()`` in class ``owner`` may run besides the class's own ``m``."""

    owner: str  # the class the call is written in
    method: str
    followed: tuple[str, ...]  # override qualnames, sorted, at most MAX_OVERRIDES
    more: int  # overrides beyond the cap, not followed


def empty_method(fn: FunctionInfo) -> bool:
    """No body of its own: ``@abstractmethod``, ``pass``, ``...``, ``raise NotImplementedError``."""
    if any(d.endswith("abstractmethod") for d in fn.decorators):
        return True
    return not fn.facts and all(c.target.endswith(_NOT_IMPLEMENTED) for c in fn.calls)


def self_class(call: CallInfo, caller: FunctionInfo | None) -> str | None:
    """The class of a ``self.m()`` / ``cls.m()`` call's receiver's bound, else None.

    ``super().m()`` and ``Mailer.m()`` name the class that runs: no dispatch."""
    if caller is None or call.receiver not in _ON_SELF:
        return None
    first = caller.params[0] if caller.params and caller.class_name else None
    if call.receiver_source not in _SELF_NAMES and call.receiver_source != first:
        return None
    owner, _, method = call.target.rpartition(".")
    return owner if owner and method.isidentifier() else None


def declared_receiver(call: CallInfo) -> str:
    """The dotted name the receiver of ``x.m()`` is written as, when its class is declared
    rather than made there (``_extract._resolve.declared_type``), else "": an annotated
    parameter or attribute, a factory's result (``get_backend().m()``, ``b = get_backend();
    b.m()``, the factory in any module), an element of an annotated container, ``cls()``.
    The object is of that class or of any subclass: the index names the class."""
    head, _, method = call.target.rpartition(".")
    if not method.isidentifier() or not head:
        return ""
    if call.receiver is ReceiverKind.INSTANCE and call.receiver_declared:
        return head
    if call.receiver is ReceiverKind.UNKNOWN and call.returned_from.endswith("()"):
        return call.returned_from  # ``b = backends.get_backend(); b.m()``
    if call.receiver is not ReceiverKind.UNKNOWN and head.endswith("()") and "()" not in head[:-2]:
        return head  # ``backends.get_backend().m()``, the factory in another module
    return ""


class SelfDispatch:
    """The overrides below a class, memoised: the same ``self.m()`` recurs in many methods."""

    def __init__(self, index: SymbolIndex) -> None:
        self.index = index
        self._below: dict[str, list[str]] | None = None
        self._memo: dict[tuple[str, str], Overrides | None] = {}

    def overrides(self, owner: str, method: str) -> Overrides | None:
        """The overrides of ``method`` that instances of classes below ``owner`` run, or
        None when there is none (or ``owner`` is no project class)."""
        key = (owner, method)
        if key not in self._memo:
            self._memo[key] = self._find(owner, method)
        return self._memo[key]

    def _find(self, owner: str, method: str) -> Overrides | None:
        index = self.index
        if owner not in index.classes or index.is_library(owner) or method.startswith("__"):
            return None
        defining = {d for d in index.classes_defining(method) if not index.is_library(d)}
        # Checked first because it is cheap: most methods are defined on one line of bases.
        if not defining - set(index.mro(owner)):
            return None
        runs = {self._runs(sub, method, defining) for sub in self.below(owner)}
        own = index.method(owner, method)
        names = sorted(f"{d}.{method}" for d in runs if d is not None and f"{d}.{method}" != own)
        if not names:
            return None
        followed = tuple(names[:MAX_OVERRIDES])
        return Overrides(owner, method, followed, len(names) - len(followed))

    def _runs(self, cls: str, method: str, defining: set[str]) -> str | None:
        """The project class whose ``method`` an instance of ``cls`` runs (the first
        class of its MRO defining it), None when that is a library's."""
        for base in self.index.mro(cls):
            if base in defining:
                return base
            if self.index.is_library(base) and f"{base}.{method}" in self.index.functions:
                return None
        return None

    def below(self, owner: str) -> list[str]:
        """The project classes that inherit from ``owner``, transitively."""
        if self._below is None:
            below: dict[str, list[str]] = {}
            index = self.index
            for cls in sorted(index.classes):
                if index.is_library(cls):
                    continue
                for base in index.mro(cls)[1:]:
                    below.setdefault(base, []).append(cls)
            self._below = below
        return self._below.get(owner, [])


# The last name of a call that keeps a function for later, or runs it in the background.
_KEEPS = frozenset(
    {
        # registries, hooks, signals, routes, schedulers
        "connect", "connect_via", "register", "add_url_rule", "route", "add_api_route",
        "add_route", "add_websocket_route", "api_route", "subscribe", "on", "once", "bind",
        "listen", "listens_for", "add_listener", "add_handler", "add_callback",
        "add_done_callback", "add_job", "add_task", "every", "do", "schedule", "atexit",
        "receiver", "hook", "hookimpl", "command", "task", "job", "actor", "signal",
        "setdefault", "set", "append", "appendleft", "add", "insert", "extend", "update",
        "put", "put_nowait", "push", "register_function", "register_instance",
        "context_processor", "errorhandler", "template_filter", "template_global",
        "template_test", "url_value_preprocessor", "url_defaults", "middleware",
        "exception_handler", "finalize", "settrace", "setprofile", "excepthook",
        # wrappers that return a callable instead of calling
        "partial", "partialmethod", "wraps", "update_wrapper", "property", "cached_property",
        "staticmethod", "classmethod", "lru_cache", "cache", "setattr", "getattr", "hasattr",
        "LocalProxy", "lazy", "SimpleLazyObject", "reverse", "reverse_lazy", "as_view",
        # started elsewhere: threads, processes, executors, event loops, queues
        "Thread", "Timer", "Process", "submit", "map", "starmap", "apply_async", "delay",
        "send", "enqueue", "create_task", "ensure_future", "run_in_executor", "to_thread",
        "call_soon", "call_soon_threadsafe", "call_later", "call_at", "start_new_thread",
        "start", "spawn", "on_commit", "add_signal_handler", "BackgroundTask",
    }
)  # fmt: skip


# Functions of the standard library that call their function argument here, in this
# process (the docs of builtins, functools, itertools): ``list(map(notify, users))`` runs
# ``notify`` for each user, although ``map`` shares its name with an executor's ``map``,
# which hands the function to other threads (``_KEEPS``: a spawn site of its own).
_CALLS_HERE = frozenset(
    {
        "map", "filter", "sorted", "min", "max",  # builtins, named as the catalogue names them
        "functools.reduce", "itertools.starmap", "itertools.filterfalse",
        "itertools.takewhile", "itertools.dropwhile", "itertools.groupby",
        "itertools.accumulate",
    }
)  # fmt: skip

# Names of APIs that register a function for an event (Flask's ``before_request``,
# ``teardown_appcontext``, Starlette's ``add_event_handler``, asyncio's ``add_reader``...).
_REGISTERING = ("add_", "on_", "before_", "after_", "teardown_", "register", "set_", "connect")


def callbacks(
    index: SymbolIndex, fn: FunctionInfo, calls: list[tuple[CallTarget, bool]], sites: set[int]
) -> list[str]:
    """The project functions ``fn`` hands to calls that are not followed into project code
    (``calls``: each call of ``fn`` and whether it runs project code), each treated as
    called by ``fn`` (its effects are ``fn``'s); ``sites``: the lines of ``fn``'s job sites.

    A spawn API (``_spawned``) that is no site runs its callable argument for ``fn``
    (``await loop.run_in_executor(None, f, x)``, ``ex.submit(f, x).result()``): that
    callable is followed, and only it (the spawn's other arguments are data)."""
    found: list[str] = []
    for target, followed in calls:
        call = target.call
        if followed or call.span.line in sites:
            continue
        spawn = spawned(target)
        if spawn is not None:
            passed = handed_function(index, fn, spawn.written or "")
            found += [passed] if passed is not None and passed != fn.qualname else []
            continue
        here = target.name in _CALLS_HERE
        if not here and _keeps(call.target):
            continue
        for source in [*call.arg_sources, *call.kwarg_sources.values()]:
            # ``reduce(lambda acc, u: notify(u), users)``: what such a function calls runs
            passed = (
                handed_function(index, fn, source) if here else _project_function(index, fn, source)
            )
            if passed is not None and passed != fn.qualname:
                found.append(passed)
    return found


def _keeps(target: str) -> bool:
    """A call that keeps or starts what it is given, or a decorator applied by hand
    (``bp.route("/x")(view)``, ``retry(stop=3)(fetch)``: a call of a call's result), which
    returns a wrapper rather than calling."""
    if "()." in target or target.endswith("()"):
        return True
    last = target.rpartition(".")[2]
    if last.startswith(_REGISTERING):
        return True  # ``app.before_request(f)``, ``loop.add_reader(fd, f)``, ``set_handler``
    return any(part in _KEEPS for part in target.split(".")[-2:])


def site_lines(sites: list[RawSite]) -> dict[str, set[int]]:
    """Function -> the lines its job sites span (a call there starts work, is no callback)."""
    found: dict[str, set[int]] = {}
    for site in sites:
        lines = found.setdefault(site.enclosing_function or "", set())
        lines.update(range(site.span.line, (site.span.end_line or site.span.line) + 1))
    return found


def handed_function(index: SymbolIndex, fn: FunctionInfo, written: str) -> str | None:
    """The project function a callable handed to a spawn API runs (``f``, ``self.f``,
    ``partial(f, x)``, ``lambda: f(x)``), else None."""
    root = handed_root(written)
    return _project_function(index, fn, root) if root else None


def _project_function(index: SymbolIndex, fn: FunctionInfo, source: str) -> str | None:
    """``page_template`` (nested in ``fn``, or the module's), ``self.render``: the project
    function it names; None for anything else (a parameter, a class, an expression)."""
    head, dot, attr = source.partition(".")
    if not head.isidentifier() or head in fn.params[1:] or (not dot and head in fn.params):
        return None
    if dot:
        if head not in ("self", "cls") or not fn.class_name or not attr.isidentifier():
            return None
        return index.method(fn.qualname.rsplit(".", 1)[0], attr)
    nested = f"{fn.qualname}.<locals>.{head}"
    if nested in index.functions:
        return nested
    summary = index.home.get(fn.qualname)
    found = index.resolve(f"{summary.module}.{head}") if summary else None
    if found is None or found.kind != SymbolKind.FUNCTION or index.is_library(found.name):
        return None
    return found.name
