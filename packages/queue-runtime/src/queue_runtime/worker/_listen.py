"""Wake-ups: LISTEN on ``<schema>_jobs``; enqueue NOTIFYs with the pool as payload.

A dedicated autocommit connection (not from the store's pool: it blocks in
``notifies``). Each NOTIFY marks its pool as having work and wakes the claim
loop at once (no poll tick in between). When it breaks, the claim loop still polls every
``poll_interval``, and the listener reconnects with jittered backoff.
"""

from __future__ import annotations

import logging
import threading

from queue_runtime.config import Settings
from queue_runtime.pg.connect import notifications
from queue_runtime.worker._backoff import TRANSIENT, jitter
from queue_runtime.worker._prefetch import PoolSignals

log = logging.getLogger("queue_runtime.worker")


class Listener:
    def __init__(
        self,
        settings: Settings,
        signals: PoolSignals,
        pools: set[str],
        wake: threading.Event,
        app_name: str,
    ) -> None:
        self._settings, self._pools = settings, pools
        self._signals, self._wake, self._app_name = signals, wake, app_name
        self.connected = threading.Event()

    def run(self, stop: threading.Event) -> None:
        failures = 0
        while not stop.is_set():
            try:
                self._listen(stop)
                failures = 0
            except TRANSIENT as exc:
                self.connected.clear()
                delay = jitter(failures + 3)
                log.warning("LISTEN connection lost (%s); reconnecting in %.2fs", exc, delay)
                failures += 1
                stop.wait(delay)

    def _listen(self, stop: threading.Event) -> None:
        for pool in notifications(self._settings, self._app_name, stop, self._on_connect):
            if pool in self._pools:
                self._signals.notify(pool)
                self._wake.set()

    def _on_connect(self) -> None:
        self.connected.set()
        self._signals.notify_all()  # we may have missed notifications while (re)connecting
        self._wake.set()
