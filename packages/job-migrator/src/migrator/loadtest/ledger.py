"""The execution ledger: one row per run of the job body, in the sandbox database.

``<schema>.loadtest_ledger`` (schema = the sandbox's queue schema): run id,
job id, attempt, idempotency key, worker pid, start, end, whether the body
raised. The worker app (:mod:`migrator.loadtest._ledger_app`) writes it around
the real job function on its own connection (application name
``migrator-loadtest-ledger-<pid>``, so ``pg-terminate`` chaos spares it); the load
test reads it to measure dispatch latency, duplicate deliveries and duplicate
completions. The ledger itself is the runtime's test helper
(:class:`queue_runtime.testing.ExecutionLedger`, here :class:`~queue_runtime.testing.PgLedger`);
this module names its connections and reads its rows as the report's executions.
"""

from __future__ import annotations

import os
from collections import defaultdict
from urllib.parse import urlsplit, urlunsplit

from migrator.loadtest.report import DuplicateCompletion, Execution
from queue_runtime.testing import ExecutionLedger, LedgerWriter, PgLedger

LEDGER_APP_NAME = "migrator-loadtest-ledger"


def ledger_in(dsn: str, schema: str) -> ExecutionLedger:
    """The ledger in the sandbox's queue schema."""
    return PgLedger(dsn, schema)


def ledger_app_name(pid: int) -> str:
    """The application name of a worker's ledger connections (chaos waits for them to settle)."""
    return f"{LEDGER_APP_NAME}-{pid}"


def with_application_name(dsn: str, name: str) -> str:
    """``dsn`` with ``application_name=name`` (URL form; a key=value DSN gets it appended)."""
    if "://" not in dsn:
        return f"{dsn} application_name={name}"
    parts = urlsplit(dsn)
    query = "&".join(
        p for p in parts.query.split("&") if p and not p.startswith("application_name=")
    )
    query = f"{query}&application_name={name}" if query else f"application_name={name}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def worker_writer(ledger: ExecutionLedger, run_id: str) -> LedgerWriter:
    """The ledger writer of this worker process, under its ledger application name."""
    return ledger.writer(run_id, ledger_app_name(os.getpid()))


def read(ledger: ExecutionLedger, run_id: str) -> list[tuple[Execution, str | None]]:
    """Every ledger row of the run: (execution, idempotency key), in insertion order."""
    return [
        (
            Execution(
                job_id=r.job_id,
                attempt=r.attempt,
                pid=r.pid,
                started_at=r.started_at,
                finished_at=r.finished_at,
                failed=r.failed,
            ),
            r.idempotency_key,
        )
        for r in ledger.read(run_id)
    ]


def duplicate_completions(
    rows: list[tuple[Execution, str | None]],
) -> list[DuplicateCompletion]:
    """Keys (a job without a key: its id) whose body ran to completion more than once."""
    by_key: dict[tuple[bool, str], list[Execution]] = defaultdict(list)
    for execution, key in rows:
        ident = (True, key) if key is not None else (False, str(execution.job_id))
        by_key[ident].append(execution)
    found = []
    for (keyed, key), runs in by_key.items():
        completed = [e for e in runs if e.finished_at is not None and not e.failed]
        if len(completed) > 1:
            found.append(
                DuplicateCompletion(
                    key=key, keyed=keyed, completions=len(completed), executions=runs
                )
            )
    return sorted(found, key=lambda d: d.key)


def duplicate_deliveries(rows: list[tuple[Execution, str | None]]) -> int:
    """Jobs whose body started more than once."""
    starts: dict[int, int] = defaultdict(int)
    for execution, _ in rows:
        starts[execution.job_id] += 1
    return sum(1 for n in starts.values() if n > 1)
