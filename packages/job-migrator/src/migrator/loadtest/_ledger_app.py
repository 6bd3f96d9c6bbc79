"""The APP_MODULE of the load test's workers: the sandbox, the job, and the ledger around it.

``queue-runtime worker migrator.loadtest._ledger_app`` (started by
:func:`migrator.loadtest.run_loadtest`, never by hand) imports the sandbox
settings module (which configures queue_runtime), imports the job's module
(which registers it), then wraps the registered job's function so that every
run of its body writes a ledger row when it starts and stamps it when it
returns or raises. The wrapper is the innermost layer: whatever the runtime
does around the function (the execution guard included) stays as it is.

Environment (set by the load test): ``MIGRATOR_LOADTEST_SANDBOX``,
``MIGRATOR_LOADTEST_JOB``, ``MIGRATOR_LOADTEST_JOB_MODULE``,
``MIGRATOR_LOADTEST_RUN``, ``MIGRATOR_LOADTEST_LEDGER_DSN``,
``MIGRATOR_LOADTEST_SCHEMA``.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from typing import Any

from migrator.loadtest.ledger import ledger_in, worker_writer
from queue_runtime import JobFunction, current
from queue_runtime.testing import LedgerWriter
from queue_runtime.worker import current_job


def _wrap(fn: Callable[..., Any], is_async: bool, ledger: LedgerWriter) -> Callable[..., Any]:
    def begin() -> int:
        running = current_job()
        if running is None:  # called outside a worker attempt: nothing to record against
            return -1
        return ledger.start(running.id, running.attempt, running.idempotency_key, os.getpid())

    def end(entry: int, failed: bool) -> None:
        if entry >= 0:
            ledger.finish(entry, failed)

    if is_async:

        @functools.wraps(fn)
        async def recorded_async(*args: Any, **kwargs: Any) -> Any:
            entry = begin()
            try:
                value = await fn(*args, **kwargs)
            except BaseException:
                end(entry, True)
                raise
            end(entry, False)
            return value

        return recorded_async

    @functools.wraps(fn)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        entry = begin()
        try:
            value = fn(*args, **kwargs)
        except BaseException:
            end(entry, True)
            raise
        end(entry, False)
        return value

    return recorded


def install() -> None:
    importlib.import_module(os.environ["MIGRATOR_LOADTEST_SANDBOX"])
    job_module = os.environ.get("MIGRATOR_LOADTEST_JOB_MODULE")
    if job_module:
        importlib.import_module(job_module)
    runtime = current()
    jf = runtime.registry.get(os.environ["MIGRATOR_LOADTEST_JOB"], JobFunction)
    if getattr(jf.fn, "_migrator_loadtest_ledger", False):
        return
    ledger = worker_writer(
        ledger_in(
            os.environ["MIGRATOR_LOADTEST_LEDGER_DSN"], os.environ["MIGRATOR_LOADTEST_SCHEMA"]
        ),
        os.environ["MIGRATOR_LOADTEST_RUN"],
    )
    wrapped = _wrap(jf.fn, jf.is_async, ledger)
    wrapped._migrator_loadtest_ledger = True  # type: ignore[attr-defined]
    jf.fn = wrapped


if os.environ.get("MIGRATOR_LOADTEST_RUN"):
    install()
