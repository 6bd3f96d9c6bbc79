"""``gate_inline_total{job}``: enqueues the gate kept inline (the job was not certified).

Counted in-process (:func:`gate_inline_counts`) and on prometheus_client's
default registry, so an app exposing that registry exports it.
"""

from __future__ import annotations

import threading

try:
    from prometheus_client import Counter
except ImportError:  # the optional extra is not installed: the in-process count remains
    from queue_runtime._prometheus import FallbackCounter as Counter  # type: ignore[assignment]

GATE_INLINE = Counter(
    "gate_inline",
    "Enqueues of a gated job run inline because it holds no certification for its current code.",
    ["job"],
)

_counts: dict[str, int] = {}
_lock = threading.Lock()


def count_gate_inline(job: str) -> None:
    with _lock:
        _counts[job] = _counts.get(job, 0) + 1
    GATE_INLINE.labels(job=job).inc()


def gate_inline_counts() -> dict[str, int]:
    """Job name -> enqueues the gate kept inline in this process."""
    with _lock:
        return dict(_counts)
