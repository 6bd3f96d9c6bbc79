"""Chaos while the load runs: SIGKILL workers mid-batch, restart Redis, terminate backends.

The events are spread evenly over the middle of the load window (15% to 85%
of the duration), in the order the kinds were given; ``kill-workers`` happens
``kill_count`` times. Each event is recorded with its time.

``kill-workers`` aims at the worst moment for at-least-once delivery: the
victim is SIGKILLed as soon as one of its executions has *returned* (the body
ran to completion) while the queue has not yet acknowledged it, and while the
execution guard, if the job has a guarded key, has recorded the key as
completed. A job whose key the guard holds is then answered from the guard
when it is redelivered; a job without one runs to completion a second time,
which is the duplicate completion the report shows. When no such moment comes
within a few seconds the victim is killed while it has executions running
(mid-batch), or at once. Then a replacement worker is started.

Each moment is confirmed with the victim frozen (SIGSTOP): the kill never
lands while one of its executions is between its return and the guard's
record of its key. That window is the guard's documented limit (a job whose
effect and key are two commits; ``complete_in`` closes it), not something a
load test can certify away, so it is not aimed at.
"""

from __future__ import annotations

import signal
import threading
import time
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql

from migrator.loadtest.fleet import Fleet, PrivateRedis, WorkerProcess
from migrator.loadtest.ledger import ledger_app_name, table
from migrator.loadtest.report import ChaosEvent
from migrator.loadtest.spec import ChaosKind, LoadTestSpec

CONTROL_APP_NAME = "migrator-loadtest"
ACK_WINDOW_WAIT = 4.0  # seconds to wait for a returned-but-unacknowledged execution
RUNNING_WAIT = 4.0  # then seconds to wait for any running execution
FREEZE_SETTLE = 0.02  # seconds a frozen worker's statements in flight get to land
FREEZE_SETTLE_MAX = 0.5  # at most this long while its ledger connection is still active
_ALWAYS = sql.SQL("SELECT 1 WHERE %s::text IS NOT NULL AND %s::int IS NOT NULL")


def plan(spec: LoadTestSpec) -> list[tuple[float, ChaosKind]]:
    """(offset seconds, kind) of every chaos event of the run."""
    kinds: list[ChaosKind] = []
    for kind in spec.chaos:
        kinds += [kind] * (spec.kill_count if kind is ChaosKind.KILL_WORKERS else 1)
    if not kinds:
        return []
    first, last = 0.15 * spec.duration, 0.85 * spec.duration
    gap = (last - first) / max(1, len(kinds) - 1)
    return [(round(first + i * gap, 3), kind) for i, kind in enumerate(kinds)]


class Chaos:
    """Runs the planned events in a thread; ``events`` / ``errors`` when joined."""

    def __init__(
        self,
        spec: LoadTestSpec,
        fleet: Fleet,
        redis_server: PrivateRedis | None,
        run_id: str,
        progress: Any,
    ) -> None:
        self.spec = spec
        self.fleet = fleet
        self.redis_server = redis_server
        self.run_id = run_id
        self.progress = progress
        self.events: list[ChaosEvent] = []
        self.errors: list[str] = []
        self._thread: threading.Thread | None = None
        self._started = 0.0
        self._victims = 0
        self._struck: tuple[datetime, float] | None = None
        settings = fleet.settings
        self._dsn = settings.database_url or ""
        self._schema = settings.schema_name

    def start(self, started: float) -> None:
        self._started = started
        self._thread = threading.Thread(target=self._run, name="loadtest-chaos", daemon=True)
        self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        for offset, kind in plan(self.spec):
            delay = self._started + offset - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._struck = None
            try:
                detail = self._inject(kind)
            except Exception as exc:  # chaos must not stop the run; a missed kind fails it
                self.errors.append(f"{kind.value}: {type(exc).__name__}: {exc}")
                continue
            at, mono = self._struck or (datetime.now(UTC), time.monotonic())
            event = ChaosEvent(
                kind=kind, at=at, offset=round(mono - self._started, 3), detail=detail
            )
            self.events.append(event)
            self.progress(f"chaos {kind.value} at {event.offset:.1f}s: {detail}")

    def _inject(self, kind: ChaosKind) -> str:
        if kind is ChaosKind.KILL_WORKERS:
            return self.kill_worker()
        if kind is ChaosKind.REDIS_RESTART:
            return self.restart_redis()
        return self.terminate_backends()

    # -- kill-workers ----------------------------------------------------------
    def kill_worker(self) -> str:
        live = self.fleet.live()
        if not live:
            raise RuntimeError("no live worker to kill")
        victim = live[self._victims % len(live)]
        self._victims += 1
        with psycopg.connect(self._dsn, autocommit=True, application_name=CONTROL_APP_NAME) as conn:
            moment = self._kill_at_the_moment(conn, victim)
        self._struck = (datetime.now(UTC), time.monotonic())  # the event's time: the kill's
        victim.process.wait(timeout=10)
        replacement = self.fleet.start()
        self.fleet.wait_connected(replacement)
        return (
            f"SIGKILL worker {victim.index} (pid {victim.pid}) {moment}; "
            f"started worker {replacement.index} (pid {replacement.pid})"
        )

    def _kill_at_the_moment(self, conn: psycopg.Connection[Any], victim: WorkerProcess) -> str:
        """SIGKILL ``victim`` at the first moment of the module docstring; returns which moment.

        Each candidate moment is confirmed with the worker frozen (SIGSTOP, then 20 ms,
        and longer while its ledger connection still runs a statement, so that writes it
        already sent land): if one of its executions is then between its return and the
        guard's record of its key, the worker is resumed (SIGCONT) and the search goes on.
        """
        returned, running, exposed = self._moment_queries()
        params = (self.run_id, victim.pid)
        began, freezes = time.monotonic(), 0

        def frozen_kill(query: sql.Composed) -> Any:
            nonlocal freezes
            freezes += 1
            victim.process.send_signal(signal.SIGSTOP)
            try:
                time.sleep(FREEZE_SETTLE)
                settle = time.monotonic() + FREEZE_SETTLE_MAX
                while time.monotonic() < settle and _active(conn, ledger_app_name(victim.pid)):
                    time.sleep(0.002)  # a ledger write the worker sent is still being run
                row = conn.execute(query, params).fetchone()
                window = conn.execute(exposed, params).fetchone() if exposed is not None else (0,)
            except BaseException:
                victim.process.send_signal(signal.SIGCONT)  # never leave a worker frozen
                raise
            if row is not None and row[0] and window is not None and not window[0]:
                victim.process.send_signal(signal.SIGKILL)
                return row[0]
            victim.process.send_signal(signal.SIGCONT)
            return None

        for query, wait, describe in (
            (returned, ACK_WINDOW_WAIT, "right after job {} returned, before its acknowledgement"),
            (running, RUNNING_WAIT, "with {} execution(s) running"),
            (_ALWAYS, RUNNING_WAIT, "(no execution was running)"),
        ):
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and victim.alive():
                row = conn.execute(query, params).fetchone()
                if row is not None and row[0] and (found := frozen_kill(query)) is not None:
                    searched = time.monotonic() - began
                    return (
                        f"{describe.format(found)} (found in {searched:.2f}s, {freezes} freeze(s))"
                    )
                time.sleep(0.0005)
        victim.process.send_signal(signal.SIGKILL)
        return "at the end of the search"

    def _moment_queries(self) -> tuple[sql.Composed, sql.Composed, sql.Composed | None]:
        """(returned, running, exposed) for a victim pid.

        ``returned``: the job id of an execution that returned while its attempt still
        runs (not acknowledged); for a key the execution guard holds (a ``job_keys``
        row), only once the guard recorded it completed. ``running``: how many
        executions are running. ``exposed``: how many executions are between their
        return and the guard's record of their key (None without a guard table).
        """
        s = sql.Identifier(self._schema)
        ledger_ = table(self._schema)
        guarded = _has_table(self._dsn, self._schema, "job_keys")
        key_clause = (
            sql.SQL(
                " AND (l.idempotency_key IS NULL OR NOT EXISTS"
                " (SELECT 1 FROM {s}.job_keys k WHERE k.key = l.idempotency_key)"
                " OR EXISTS (SELECT 1 FROM {s}.job_keys k WHERE k.key = l.idempotency_key"
                " AND k.state = 'completed'))"
            ).format(s=s)
            if guarded
            else sql.SQL("")
        )
        unacked = sql.SQL(
            " FROM {ledger} l JOIN {s}.jobs j"
            " ON j.id = l.job_id AND j.attempt = l.attempt AND j.state = 'running'"
            " WHERE l.run_id = %s AND l.pid = %s AND l.finished_at IS NOT NULL AND NOT l.failed"
        ).format(ledger=ledger_, s=s)
        returned = sql.SQL("SELECT l.job_id{unacked}{key_clause} LIMIT 1").format(
            unacked=unacked, key_clause=key_clause
        )
        running = sql.SQL(
            "SELECT count(*) FROM {} WHERE run_id = %s AND pid = %s AND finished_at IS NULL"
        ).format(ledger_)
        exposed = (
            sql.SQL(
                "SELECT count(*){unacked} AND EXISTS (SELECT 1 FROM {s}.job_keys k"
                " WHERE k.key = l.idempotency_key AND k.state = 'in_progress')"
            ).format(unacked=unacked, s=s)
            if guarded
            else None
        )
        return returned, running, exposed

    # -- redis-restart -----------------------------------------------------------
    def restart_redis(self) -> str:
        if self.redis_server is None:
            raise RuntimeError("no private redis-server to restart")
        pid = self.redis_server.process.pid if self.redis_server.process else None
        began = time.monotonic()
        self.redis_server.restart()
        new_pid = self.redis_server.process.pid if self.redis_server.process else None
        return (
            f"restarted the private redis-server on port {self.redis_server.port}"
            f" (pid {pid} -> {new_pid}, down {time.monotonic() - began:.2f}s, data gone)"
        )

    # -- pg-terminate --------------------------------------------------------------
    def terminate_backends(self) -> str:
        prefix = self.fleet.app_prefix
        assert prefix.startswith("mlt-") and self.run_id in prefix  # only this run's workers
        deadline = time.monotonic() + 5.0
        with psycopg.connect(self._dsn, autocommit=True, application_name=CONTROL_APP_NAME) as conn:
            while True:
                rows = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE starts_with(application_name, %s) AND pid <> pg_backend_pid()",
                    (prefix,),
                ).fetchall()
                killed = sum(1 for (ok,) in rows if ok)
                if killed or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        if not killed:
            raise RuntimeError("no worker backend to terminate")
        return f"pg_terminate_backend on {killed} worker connection(s) ({prefix}*)"


def _has_table(dsn: str, schema: str, name: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}"."{name}"',)).fetchone()
    return bool(row and row[0])


def _active(conn: psycopg.Connection[Any], app_name: str) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND state = 'active'",
        (app_name,),
    ).fetchone()
    return bool(row and row[0])
