"""The admin feed of domain events: handlers publish, one thread consumes.

NOT a job: the consumer thread is started once at startup and lives as long
as the app (a ``while True`` loop over a queue). There is nothing per-request
to move onto a job queue, and the scanner must not report it.
"""

from __future__ import annotations

import threading
from queue import Queue

_STOP = None


class EventLog:
    def __init__(self) -> None:
        self._queue: Queue[str | None] = Queue()
        self._seen: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._consume, name="shop-event-log", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout=10)

    def publish(self, event: str) -> None:
        self._queue.put(event)

    def seen(self) -> list[str]:
        with self._lock:
            return list(self._seen)

    def _consume(self) -> None:
        while True:
            event = self._queue.get()
            if event is _STOP:
                return
            with self._lock:
                self._seen.append(event)
