"""Work a function spawns or awaits inside itself: the spawn API is no gap, its work is.

``await loop.run_in_executor(None, resize, path)``, ``await asyncio.to_thread(resize,
path)``, ``anyio.to_thread.run_sync``, Starlette's ``run_in_threadpool``,
``executor.submit(resize, path).result()`` and ``loop.call_soon(resize, path)`` call
``resize(path)`` in another thread or later on the loop: what ``resize`` does is what the
function does, awaited or not. The callable argument is followed like a direct call
(``_dispatch.callbacks`` makes a project function a callee, ``_local`` matches a
library one against the catalogue as if it were called there); one the scan cannot
name (a parameter, a local holding a callable) is a gap that names it.

``asyncio.create_task(coro(a))``, ``asyncio.Task(coro(a))``, ``ensure_future``,
``gather``, ``wait_for``, ``shield``, ``loop.create_task``, ``tg.create_task``: their
argument is a coroutine object, and ``coro(a)`` is a call of its own in the body (followed
or a gap like any call). A coroutine made elsewhere (``create_task(coro)`` with ``coro`` a
parameter) was made by a call written in some caller, whose effects are that caller's:
the API runs nothing the scan has not already seen where the coroutine was made.

Waiting on what such an API returned (``ex.submit(f).result()``, ``fut.result()``) runs
nothing more either, nor does the rest of the future protocol (``asyncio.Future``,
``asyncio.Task``, ``concurrent.futures.Future``: ``cancel``, ``done``, ``set_name``...),
on a future the scan typed (``_extract._library.FACTORIES``) or one a spawn API made.
``fut.add_done_callback(fn)`` calls ``fn(fut)`` once the future is done: ``fn`` is followed
like any handed callable. The method name is the future protocol's own, so on a receiver
of unknown type it is taken as one too (following the callable hides nothing); so are
``set_result`` and ``set_exception``, which only complete a future (``ready.set_result(v)``
on ``self._ready = loop.create_future()``, made in another method).
``asyncio.run(coro(a))`` and ``loop.run_until_complete(coro(a))`` run a coroutine made by
a call of its own, like ``create_task``.

At a spawn the scan reports as a site, the site says what runs (a site edge to its job,
or, when the target is only known at run time, a gap of the site): the API itself is
then explained, and its callable is not followed a second time here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inventory._classify._target import CallTarget
from inventory.summary import CallInfo

_EVENT_LOOPS = frozenset(
    {
        "asyncio.AbstractEventLoop",
        "asyncio.events.AbstractEventLoop",
        "asyncio.BaseEventLoop",
        "asyncio.base_events.BaseEventLoop",
        "tornado.ioloop.IOLoop",
    }
)
_TASK_GROUPS = frozenset({"asyncio.TaskGroup", "asyncio.taskgroups.TaskGroup"})
_UNKNOWN = "?."
REFERENCE = re.compile(r"^[A-Za-z_][\w.]*$")
# ``partial(fn, *args)`` / ``functools.partial(fn, x)`` and ``lambda: fn(x)``: run ``fn``.
WRAPPED = re.compile(r"^(?:(?:functools\.)?partial\(\s*|lambda[^:]*:\s*)([A-Za-z_][\w.]*)\b")
# Functions calling their callable argument (position, keyword), in a thread or in place.
_CALLING = {
    "asyncio.to_thread": (0, "func"),
    "asyncio.threads.to_thread": (0, "func"),
    "starlette.concurrency.run_in_threadpool": (0, "func"),
    "fastapi.concurrency.run_in_threadpool": (0, "func"),
    "anyio.to_thread.run_sync": (0, "func"),
    # contextvars: "Context.run(callable, *args, **kwargs): Execute callable(*args, **kwargs)
    # code in the context object", in the calling thread.
    "contextvars.Context.run": (0, "callable"),
}
# Event loop methods calling their callable argument: in an executor, or later on the loop.
_LOOP_CALLING = {
    "run_in_executor": (1, "func"),
    "call_soon": (0, "callback"),
    "call_soon_threadsafe": (0, "callback"),
    "call_later": (1, "callback"),
    "call_at": (1, "callback"),
}
_EXECUTOR_SUBMIT = (0, "fn")
_EXECUTORS = "concurrent.futures."
# Functions taking coroutines or awaitables (made by calls of their own).
_AWAITING = frozenset(
    {
        "asyncio.create_task",
        "asyncio.ensure_future",
        "asyncio.tasks.create_task",
        "asyncio.tasks.ensure_future",
        "asyncio.Task",
        "asyncio.tasks.Task",
        "asyncio.gather",
        "asyncio.wait_for",
        "asyncio.shield",
        "asyncio.wait",
        "asyncio.as_completed",
        "asyncio.run_coroutine_threadsafe",
        "asyncio.run",
        "asyncio.runners.run",
        "asyncio.Runner.run",
        "asyncio.runners.Runner.run",
        "concurrent.futures.wait",
        "concurrent.futures.as_completed",
        *_TASK_GROUPS,
    }
)
# The future protocol (docs.python.org/3/library/asyncio-future.html, asyncio-task.html,
# concurrent.futures.html): methods that run nothing of their own.
_FUTURE_METHODS = frozenset(
    {"result", "exception", "done", "cancelled", "cancel", "running", "remove_done_callback"}
    | {"get_name", "set_name", "get_coro", "get_context", "get_loop", "get_stack"}
    | {"cancelling", "uncancel", "set_result", "set_exception", "print_stack"}
)
# Names only the future protocol has (asyncio.Future, concurrent.futures.Future): a call of
# one on a receiver of unknown type completes a future, which runs nothing of its own (it
# wakes whoever awaits it, in this process); ``result``, ``cancel``, ``done`` are read as the
# protocol only on a future, their names being everyone's (``order.cancel()``).
_FUTURE_OWN = frozenset({"set_result", "set_exception"})
_DONE_CALLBACK = "add_done_callback"  # calls its callable with the future, once done
# ``task.add_done_callback(tasks.discard)``: asyncio's documented idiom for keeping a task
# referenced until it ends. The method gets the future itself, which only an in-memory
# collection can hold: forgetting it there is no effect, whatever the receiver is named.
_FORGETS = frozenset({"discard", "remove"})
_FUTURES = frozenset(
    {
        "asyncio.Future",
        "asyncio.futures.Future",
        "asyncio.Task",
        "asyncio.tasks.Task",
        "concurrent.futures.Future",
        "concurrent.futures._base.Future",
    }
)
# ``x.create_task(...)`` and the like on a receiver of unknown type: their names are
# asyncio's own, and what they return is a future.
_MAKES_FUTURES = frozenset(
    {"create_task", "create_future", "run_in_executor", "ensure_future", "run_coroutine_threadsafe"}
)


@dataclass(frozen=True)
class Spawn:
    """A call of a spawn API: ``written`` is its callable argument as written, "" for an
    API taking coroutines, None when the call passes no callable the scan can place."""

    api: str
    written: str | None
    position: int = 0  # of the callable among the positional arguments
    keyword: str = ""  # the callable's keyword

    def handed(self, call: CallInfo) -> CallInfo:
        """The call as the callable receives it: ``run_in_executor(None, f, a, k=b)`` is
        ``f(a, k=b)``, written where the spawn is (for the catalogue's matching)."""
        start = self.position + 1
        kept = {k: v for k, v in call.kwarg_sources.items() if k != self.keyword}
        update = {
            "args": call.args[start:],
            "arg_sources": call.arg_sources[start:],
            "arg_types": call.arg_types[start:],
            "kwargs": {k: v for k, v in call.kwargs.items() if k in kept},
            "kwarg_sources": kept,
        }
        return call.model_copy(update=update)


def spawned(target: CallTarget) -> Spawn | None:
    """The spawn ``target`` is a call of, else None."""
    name, call = target.name, target.call
    if name in _AWAITING:
        return Spawn(name, "")
    head, _, method = name.rpartition(".")
    if method == _DONE_CALLBACK and (head == _UNKNOWN[:-1] or _on_future(target)):
        return _handing(name, target, 0, "fn")
    if method in _FUTURE_METHODS and (_on_future(target) or _future_own(head, method)):
        return Spawn(name, "")
    if name in _CALLING:
        return _handing(name, target, *_CALLING[name])
    on_loop = head in _EVENT_LOOPS or _named_loop(target)
    if method in _LOOP_CALLING and on_loop:
        return _handing(name, target, *_LOOP_CALLING[method])
    if method in ("create_task", "run_until_complete") and (on_loop or head in _TASK_GROUPS):
        return Spawn(name, "")
    if method == "submit" and head.startswith(_EXECUTORS) and call.receiver_source:
        return _handing(name, target, *_EXECUTOR_SUBMIT)
    return None


def _future_own(head: str, method: str) -> bool:
    """``self._ready.set_result(value)`` on a receiver of unknown type."""
    return method in _FUTURE_OWN and head == _UNKNOWN[:-1]


def _named_loop(target: CallTarget) -> bool:
    """``self._loop.create_task(...)``: a receiver of unknown type named an event loop (as
    the extractor takes it, ``_sites_futures._owns_tasks``)."""
    if not target.name.startswith(_UNKNOWN):
        return False
    return target.call.receiver_source.rpartition(".")[2].lower().endswith("loop")


def _on_future(target: CallTarget) -> bool:
    """A future protocol method on a future: typed (``asyncio.Task.cancel``), or made by a
    spawn API (``ex.submit(f).result()``, ``fut = loop.run_in_executor(...); fut.result()``,
    ``task = self.loop.create_task(...); task.cancel()``)."""
    head = target.name.rpartition(".")[0]
    if head in _FUTURES:
        return True
    made = head if head.endswith("()") else target.call.returned_from
    if not made.endswith("()"):
        return False
    maker = made.removesuffix("()")
    if maker.startswith(_UNKNOWN) and maker.rpartition(".")[2] in _MAKES_FUTURES:
        return True
    inner = CallTarget(target.call, maker, target.kind, None)
    return spawned(inner) is not None


def _handing(api: str, target: CallTarget, position: int, keyword: str) -> Spawn:
    """The spawn, with its callable argument (by keyword, or by position when no ``*args``
    comes before it)."""
    call = target.call
    if keyword in call.kwarg_sources:
        return Spawn(api, call.kwarg_sources[keyword], len(call.arg_sources), keyword)
    sources = call.arg_sources
    if position < len(sources) and not any(s.startswith("*") for s in sources[: position + 1]):
        return Spawn(api, sources[position], position, keyword)
    return Spawn(api, None, position, keyword)


def handed_root(written: str) -> str | None:
    """The name a handed callable runs: ``fn``, ``self.fn``, ``partial(fn, x)``,
    ``lambda: fn(x)``; None for anything else (``make()``: what a call returned)."""
    written = written.strip()
    if REFERENCE.match(written):
        return written
    found = WRAPPED.match(written)
    return found.group(1) if found else None


def forgets_the_future(spawn: Spawn) -> bool:
    """``fut.add_done_callback(running.discard)`` / ``(bucket.remove)``: the future is
    dropped from the collection that kept it (see ``_FORGETS``)."""
    written = (spawn.written or "").strip()
    receiver, _, method = written.rpartition(".")
    return (
        spawn.api.rpartition(".")[2] == _DONE_CALLBACK
        and method in _FORGETS
        and bool(receiver)
        and REFERENCE.match(written) is not None
    )
