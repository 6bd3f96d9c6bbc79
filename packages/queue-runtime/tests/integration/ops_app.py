"""Jobs for the cancel and pause tests (``test_ops_cancel_pause.py``); starts are recorded.

A worker subprocess imports it (``queue-runtime worker tests.integration.ops_app``);
``fault_app`` configures the runtime from ``QR_TEST_SETTINGS`` and records each
execution in ``<schema>.executions``, so a test sees when a job started.
"""

from __future__ import annotations

import asyncio
import time

from queue_runtime import job
from queue_runtime.worker import current_context
from tests.integration.fault_app import _finish, _start, work

__all__ = ["async_cooperative", "cooperative", "stubborn", "work"]
TICK = 0.02  # seconds between two looks at the cancel request


@job(pool="batch")
def cooperative(seconds: float) -> str:
    """Works in small steps and stops when asked (JobCancelled)."""
    execution = _start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        current_context().raise_if_cancelled()
        time.sleep(TICK)
    _finish(execution)
    return "ran to the end"


@job(pool="batch")
def stubborn(seconds: float) -> dict[str, object]:
    """Notices the request and finishes anyway: its result stands."""
    execution = _start()
    context = current_context()
    deadline = time.monotonic() + seconds
    while not context.cancel_requested and time.monotonic() < deadline:
        time.sleep(TICK)
    _finish(execution)
    return {"saw_cancel": context.cancel_requested, "done": True}


@job(pool="batch")
async def async_cooperative(seconds: float) -> str:
    execution = _start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        current_context().raise_if_cancelled()
        await asyncio.sleep(TICK)
    _finish(execution)
    return "ran to the end"
