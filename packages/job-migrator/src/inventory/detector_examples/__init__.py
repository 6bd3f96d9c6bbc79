"""Detector examples: one source for the detectors' tests and for docs/scan.md.

Each example is a small module (scanned as module ``app``) and the sites the
extractor must report in it, as ``(job qualname or None, TargetKind)`` in
source order. An example with no expected sites is INVALID: a look-alike,
Celery (already out of process), or work the caller waits for in place.

Two decisions the examples pin down:

* ``with ThreadPoolExecutor() as ex:`` and ``async with asyncio.TaskGroup()
  as tg:`` wait for all their work when the block exits, so work started in
  them runs in parallel but not in the background: it is not reported. The
  same goes for futures and tasks the function waits for itself
  (``fut.result()``, ``as_completed``, ``wait``, ``await``, ``gather``).
* A thread that runs a server's accept loop or a ``while True`` queue
  consumer is infrastructure, not a job: it is not reported.

``direct_call`` examples are checked through the classifier, which finds those
sites from effects: the extractor only says which functions are request handlers.
``enqueue`` (moved) examples too: whether the enqueued function is a ``queue_runtime``
``@job`` is known once its module is resolved.
"""

from __future__ import annotations

from inventory.detector_examples._asyncio import ASYNCIO, RUN_IN_EXECUTOR
from inventory.detector_examples._executors import EXECUTOR
from inventory.detector_examples._frameworks import FRAMEWORKS
from inventory.detector_examples._handlers import DIRECT
from inventory.detector_examples._hooks import BACKGROUND, ON_COMMIT, SCHEDULER, SIGNALS
from inventory.detector_examples._model import DetectorExample
from inventory.detector_examples._moved import MOVED
from inventory.detector_examples._registered import REGISTERED
from inventory.detector_examples._threads import PROCESS, THREAD
from inventory.models import Pattern

__all__ = ["EXAMPLES", "DetectorExample", "examples_for"]

EXAMPLES: dict[Pattern, list[DetectorExample]] = {
    Pattern.DIRECT_CALL: DIRECT + REGISTERED + FRAMEWORKS,
    Pattern.THREAD: THREAD,
    Pattern.PROCESS: PROCESS,
    Pattern.EXECUTOR_SUBMIT: EXECUTOR,
    Pattern.ASYNCIO_TASK: ASYNCIO,
    Pattern.RUN_IN_EXECUTOR: RUN_IN_EXECUTOR,
    Pattern.BACKGROUND_TASKS: BACKGROUND,
    Pattern.ON_COMMIT: ON_COMMIT,
    Pattern.SIGNAL_RECEIVER: SIGNALS,
    Pattern.SCHEDULER: SCHEDULER,
    Pattern.ENQUEUE: MOVED,
}


def examples_for(pattern: Pattern) -> list[DetectorExample]:
    return EXAMPLES.get(pattern, [])
