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
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from typing import Any

from migrator.loadtest.fleet import Fleet, PrivateRedis, WorkerProcess
from migrator.loadtest.ledger import ledger_app_name, ledger_in
from migrator.loadtest.report import ChaosEvent
from migrator.loadtest.spec import ChaosKind, LoadTestSpec
from queue_runtime.testing import ExecutionProbe

CONTROL_APP_NAME = "migrator-loadtest"
_RETURNED = "right after job {} returned, before its acknowledgement"
ACK_WINDOW_WAIT = 4.0  # seconds to wait for a returned-but-unacknowledged execution
RUNNING_WAIT = 4.0  # then seconds to wait for any running execution
FREEZE_SETTLE = 0.02  # seconds a frozen worker's statements in flight get to land
FREEZE_SETTLE_MAX = 0.5  # at most this long while its ledger connection is still active


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
        with self._probe() as probe:
            moment = self._kill_at_the_moment(probe, victim)
        self._struck = (datetime.now(UTC), time.monotonic())  # the event's time: the kill's
        victim.process.wait(timeout=10)
        replacement = self.fleet.start()
        self.fleet.wait_connected(replacement)
        return (
            f"SIGKILL worker {victim.index} (pid {victim.pid}) {moment}; "
            f"started worker {replacement.index} (pid {replacement.pid})"
        )

    def _probe(self) -> closing[ExecutionProbe]:
        return closing(ledger_in(self._dsn, self._schema).probe(self.run_id, CONTROL_APP_NAME))

    def _kill_at_the_moment(self, probe: ExecutionProbe, victim: WorkerProcess) -> str:
        """SIGKILL ``victim`` at the first moment of the module docstring; returns which moment.

        Each candidate moment is confirmed with the worker frozen (SIGSTOP, then 20 ms,
        and longer while its ledger connection still runs a statement, so that writes it
        already sent land): if one of its executions is then between its return and the
        guard's record of its key, the worker is resumed (SIGCONT) and the search goes on.
        """
        pid = victim.pid
        began, freezes = time.monotonic(), 0

        def frozen_kill(found: Callable[[], int]) -> int | None:
            nonlocal freezes
            freezes += 1
            victim.process.send_signal(signal.SIGSTOP)
            try:
                time.sleep(FREEZE_SETTLE)
                settle = time.monotonic() + FREEZE_SETTLE_MAX
                while time.monotonic() < settle and probe.active(ledger_app_name(pid)):
                    time.sleep(0.002)  # a ledger write the worker sent is still being run
                hit, window = found(), probe.exposed(pid)
            except BaseException:
                victim.process.send_signal(signal.SIGCONT)  # never leave a worker frozen
                raise
            if hit and not window:
                victim.process.send_signal(signal.SIGKILL)
                return hit
            victim.process.send_signal(signal.SIGCONT)
            return None

        moments: list[tuple[Callable[[], int], float, str]] = [
            (lambda: probe.returned(pid), ACK_WINDOW_WAIT, _RETURNED),
            (lambda: probe.running(pid), RUNNING_WAIT, "with {} execution(s) running"),
            (lambda: 1, RUNNING_WAIT, "(no execution was running)"),
        ]
        for found, wait, describe in moments:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and victim.alive():
                if found() and (hit := frozen_kill(found)) is not None:
                    searched = time.monotonic() - began
                    return f"{describe.format(hit)} (found in {searched:.2f}s, {freezes} freeze(s))"
                time.sleep(0.0005)
        victim.process.send_signal(signal.SIGKILL)
        return "at the end of the search"

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
        with self._probe() as probe:
            while True:
                killed = probe.terminate(prefix)
                if killed or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        if not killed:
            raise RuntimeError("no worker backend to terminate")
        return f"pg_terminate_backend on {killed} worker connection(s) ({prefix}*)"
