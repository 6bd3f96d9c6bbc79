"""Jobs for ``test_metrics_by_job``: a worker subprocess imports this module.

It configures the runtime from ``QR_TEST_SETTINGS`` (a Settings JSON) when set.
``steady`` succeeds, or fails its first attempt when asked (one retry, then
success); ``broken`` always fails, so it ends in the dead-letter queue.
"""

from __future__ import annotations

import os
import time

from queue_runtime import Settings, configure, job
from queue_runtime.worker import current_job

if os.environ.get("QR_TEST_SETTINGS"):
    configure(Settings.model_validate_json(os.environ["QR_TEST_SETTINGS"]))

STEADY_SECONDS = 0.02  # every steady run lasts at least this long (duration buckets)


@job(pool="batch")
def steady(n: int, fail_first: bool = False) -> int:
    running = current_job()
    if fail_first and running is not None and running.attempt == 1:
        raise RuntimeError("first attempt fails")
    time.sleep(STEADY_SECONDS)
    return n


@job(pool="batch")
def broken() -> None:
    raise ValueError("always fails")
