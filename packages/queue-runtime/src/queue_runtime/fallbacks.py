"""Calls whose arguments could not be stored, run the way the site ran them before.

When an argument of an enqueue is not encodable (no codec covers its value),
the call is not refused: it runs in-process in the site's old shape with the
original objects, and is recorded here: a count per (job, parameter, type,
reason) in this process (:func:`fallback_counts`), the counter
``queue_runtime_unencodable_fallback_total{job}`` on prometheus_client's default
registry, and one WARNING log line per job and process. Under the pytest plugin
(:func:`raise_instead`) the ``Unencodable`` error is raised instead, so an app's
suite shows what would not be stored.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from queue_runtime.errors import Unencodable

try:
    from prometheus_client import Counter
except ImportError:  # the optional extra is not installed: the in-process count remains
    from queue_runtime._prometheus import FallbackCounter as Counter  # type: ignore[assignment]

log = logging.getLogger("queue_runtime")

UNENCODABLE = Counter(
    "queue_runtime_unencodable_fallback",
    "Enqueues run in-process as before because an argument could not be stored.",
    ["job"],
)


@dataclass(frozen=True, slots=True)
class Fallback:
    """One kind of unencodable call: the job, the parameter, the value's type, why."""

    job: str
    param: str
    type_name: str
    reason: str


_counts: dict[Fallback, int] = {}
_logged: set[str] = set()
_lock = threading.Lock()
_strict = threading.Event()  # set by the pytest plugin: raise instead of falling back


def raise_instead(on: bool) -> None:
    """Raise ``Unencodable`` at enqueue instead of falling back (the pytest plugin turns it on)."""
    if on:
        _strict.set()
    else:
        _strict.clear()


def record(job: str, error: Unencodable) -> None:
    """Count a fallback of ``job``, or raise ``error`` when :func:`raise_instead` is on."""
    if _strict.is_set():
        raise error
    key = Fallback(job, error.param, error.type_name, error.reason)
    with _lock:
        _counts[key] = _counts.get(key, 0) + 1
        first = job not in _logged
        _logged.add(job)
    UNENCODABLE.labels(job=job).inc()
    if first:  # once per job and process: a hot path must not flood the log
        log.warning(
            "job %s runs in-process as before: %s (further calls are counted, not logged)",
            job,
            error,
        )


def fallback_counts() -> dict[Fallback, int]:
    """What fell back in this process, and how many times."""
    with _lock:
        return dict(_counts)
