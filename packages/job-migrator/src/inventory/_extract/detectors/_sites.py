"""Which detector a call goes to, and what becomes of a candidate at the end of its function."""

from __future__ import annotations

import re
from collections.abc import Callable

from inventory._extract._state import Candidate, FunctionState
from inventory._extract.detectors._site_common import CallSite
from inventory._extract.detectors._sites_futures import (
    ANYIO_RUNNERS,
    LOOP_CALLBACKS,
    TASK_FUNCTIONS,
    THREADPOOL_RUNNERS,
    TO_THREAD,
    executor_call,
    loop_callback,
    task_call,
    thread_call,
)
from inventory._extract.detectors._sites_hooks import (
    BACKGROUND_TASK,
    ON_COMMIT,
    background_call,
    on_commit_call,
)
from inventory._extract.detectors._sites_moved import ENQUEUE_METHODS, moved_call
from inventory._extract.detectors._sites_schedulers import REGISTRATIONS, scheduler_call
from inventory._extract.detectors._sites_signals import signal_connect
from inventory._extract.detectors._sites_threads import (
    CONSTRUCTORS,
    GREENLET_METHODS,
    GREENLET_SPAWNERS,
    greenlet_call,
    handoff_waited,
    pool_call,
    thread_constructor,
    thread_start,
)
from inventory._extract.values._values import PARTIALS
from inventory.summary import RawSite

_CELERY_METHODS = frozenset({"delay", "apply_async", "delay_on_commit", "s", "si", "send_task"})
Detector = Callable[[CallSite], Candidate | None]

# Cheap pre-filter: most calls are none of these, and skip every detector.
_METHODS = frozenset(
    {
        "start",
        "submit",
        "map",
        "apply_async",
        "apply",
        "map_async",
        "starmap_async",
        "create_task",
        "run_in_executor",
        "add_task",
        "connect",
        *REGISTRATIONS,
        "do",
        "submit_stored",
        *LOOP_CALLBACKS,
        *GREENLET_METHODS,
        *ENQUEUE_METHODS,
    }
)
_TARGETS = frozenset(
    {
        *CONSTRUCTORS,
        *TASK_FUNCTIONS,
        *TO_THREAD,
        *THREADPOOL_RUNNERS,
        *ANYIO_RUNNERS,
        *GREENLET_SPAWNERS,
        *BACKGROUND_TASK,
        *ON_COMMIT,
        *PARTIALS,  # partial(scheduler.add_job, f, ...)
    }
)
_DETECTORS: tuple[Detector, ...] = (
    thread_constructor,
    thread_start,
    pool_call,
    executor_call,
    task_call,
    loop_callback,
    thread_call,
    greenlet_call,
    background_call,
    on_commit_call,
    signal_connect,
    scheduler_call,
    moved_call,
)


def may_be_site(method: str, target: str) -> bool:
    return method in _METHODS or target in _TARGETS


def detect(call: CallSite) -> Candidate | None:
    for detector in _DETECTORS:
        found = detector(call)
        if found is not None:
            return None if _enqueues(found.site.target, found.site.target_source) else found
    return None


def _enqueues(target: str | None, written: str) -> bool:
    """``on_commit(lambda: send.delay(x))``: the work already leaves the process (Celery).

    Only a method of a task counts, as written (``send.delay``, ``task.s``): a function
    of the project named ``s`` or ``delay`` is a job like one named ``f``.
    """
    if target is None:
        return False
    method = target.rpartition(".")[2]
    return method in _CELERY_METHODS and re.search(rf"\.\s*{method}\b", written) is not None


def settle(state: FunctionState) -> list[RawSite]:
    """Sites of a finished function, once every later use of their results is known."""
    settled = (_settle(found, state) for found in state.candidates)
    return [site for site in settled if site is not None]


def _settle(found: Candidate, state: FunctionState) -> RawSite | None:
    site, bound = found.site, found.bound
    uses = state.method_uses.get(bound, []) if bound else []
    waited = sorted({line for method, line in uses if method in found.waits})
    started = found.start_lines + [line for method, line in uses if method == "start"]
    if found.drop_when_waited and bound and _waited(found, bound, waited, state):
        return None
    if found.handoffs and handoff_waited(found, state.method_uses):
        return None  # the thread sets an Event (fills a queue) this function waits on
    if "join" in found.waits:
        _thread_detail(site, started)
        lines = waited
    else:
        lines = sorted(set(state.loads.get(bound, []))) if bound else []
    site.result_used = site.result_used or bool(lines)
    site.result_use_lines = lines
    if bound and _escapes(bound, state):
        # ``self._task = create_task(...)``, ``user.hash = await run_in_executor(...)``, a
        # ``global`` timer: other code reads the handle (cancels, joins, checks it) or the value.
        site.result_used, site.result_kept_in = True, bound
        note = f"kept in `{bound}`, which code outside this function can read"
        site.detail = ", ".join(part for part in (site.detail, note) if part)
    return site


def _escapes(bound: str, state: FunctionState) -> bool:
    """The name a site's result is bound to outlives the function: an attribute or item of
    another object, a name declared ``global`` / ``nonlocal``, or a module-level name."""
    return state.info is None or bound in state.globals or not bound.isidentifier()


def _waited(found: Candidate, bound: str, waited: list[int], state: FunctionState) -> bool:
    return bool(waited) or bound in state.consumed or (found.iterator and bound in state.iterated)


def _thread_detail(site: RawSite, started: list[int]) -> None:
    note = f"started at line {min(started)}" if started else "start() not seen in this function"
    site.detail = ", ".join(part for part in (site.detail, note) if part)
