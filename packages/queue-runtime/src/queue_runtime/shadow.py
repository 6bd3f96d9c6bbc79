"""Shadow round trips: while a moved job runs inline, prove its arguments would survive the queue.

Each inline call's stored arguments are decoded (as a worker would decode
them) and encoded again; the call is *checked*, and its round trip *failed*
when decoding raises or the values re-encode to other JSON (compared
canonically, key order aside). An unencodable call (the fallback of
:mod:`queue_runtime.fallbacks`) is counted too. Counts are per job and code
fingerprint.

Counting is in memory (:class:`ShadowRecorder`, one per Runtime); the counts go
to the gate store (``GateStore.add_shadow``: one UPSERT per record, one
transaction) every ``shadow_flush_calls`` calls or ``shadow_flush_seconds``
seconds, whichever comes first, when the Runtime closes and at interpreter
exit. The periodic flushes run in a daemon thread of the recorder: the call
that crosses the threshold only wakes it, so no request waits for the write. A process killed without exit loses at most what it counted since its
last flush (fewer than ``shadow_flush_calls`` calls, or ``shadow_flush_seconds``
of them). A flush that fails keeps the counts for the next one.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from queue_runtime.definition import JobDefinition
from queue_runtime.errors import QueueError, Unencodable
from queue_runtime.shadow_model import KEPT_EXAMPLES, ShadowDelta, ShadowFailure
from queue_runtime.store import GateStore

log = logging.getLogger("queue_runtime")


@dataclass(slots=True)
class _Tally:
    checked: int = 0
    failed: int = 0
    unencodable: int = 0
    examples: list[ShadowFailure] = field(default_factory=list)  # newest first

    def failure(self, failure: ShadowFailure) -> None:
        self.examples.insert(0, failure)
        del self.examples[KEPT_EXAMPLES:]


class ShadowRecorder:
    """Per-(job, fingerprint) counts of one process, flushed to the gate store in batches."""

    def __init__(
        self,
        store: Callable[[], GateStore],
        every_calls: int = 100,
        every_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,
    ) -> None:
        self._store, self._every_calls, self._every_seconds = store, every_calls, every_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._pending = 0
        self._flushed_at = clock()
        self._background = background
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def checked(self, job: str, fingerprint: str, failure: ShadowFailure | None = None) -> None:
        """One inline call's round trip: clean (``failure`` None) or failed."""
        with self._lock:
            tally = self._tally(job, fingerprint)
            tally.checked += 1
            if failure is not None:
                tally.failed += 1
                tally.failure(failure)
        self._maybe_flush()

    def unencodable(self, job: str, fingerprint: str, error: Unencodable) -> None:
        """One call that fell back: no codec covers one of its arguments."""
        failure = ShadowFailure(error.param, error.type_name, error.reason, fallback=True)
        with self._lock:
            tally = self._tally(job, fingerprint)
            tally.unencodable += 1
            tally.failure(failure)
        self._maybe_flush()

    def _tally(self, job: str, fingerprint: str) -> _Tally:
        self._pending += 1
        return self._tallies.setdefault((job, fingerprint), _Tally())

    def _maybe_flush(self) -> None:
        due = self._pending >= self._every_calls
        if not (due or self._clock() - self._flushed_at >= self._every_seconds):
            return
        if not self._background:
            self.flush()
            return
        self._wake.set()
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._flusher, name="queue_runtime shadow flush", daemon=True
                    )
                    self._thread.start()

    def _flusher(self) -> None:
        while not self._closed:
            self._wake.wait(self._every_seconds)
            self._wake.clear()
            self.flush()

    def close(self) -> None:
        """Flush what is left and stop the flushing thread."""
        self._closed = True
        self._wake.set()
        self.flush()

    def flush(self) -> None:
        """Write what was counted since the last flush (one transaction); keep it on failure."""
        with self._flush_lock:
            with self._lock:
                taken, self._tallies, self._pending = self._tallies, {}, 0
                self._flushed_at = self._clock()
            if not taken:
                return
            try:
                self._store().add_shadow([_delta(key, tally) for key, tally in taken.items()])
            except QueueError as exc:
                self._restore(taken)
                log.warning("shadow evidence not flushed (kept for the next flush): %s", exc)

    def _restore(self, taken: dict[tuple[str, str], _Tally]) -> None:
        with self._lock:
            for key, old in taken.items():
                now = self._tallies.setdefault(key, _Tally())
                now.checked += old.checked
                now.failed += old.failed
                now.unencodable += old.unencodable
                now.examples = (now.examples + old.examples)[:KEPT_EXAMPLES]
                self._pending += old.checked + old.unencodable


def _delta(key: tuple[str, str], tally: _Tally) -> ShadowDelta:
    counts = (tally.checked, tally.failed, tally.unencodable)
    return ShadowDelta(key[0], key[1], *counts, tuple(tally.examples))


Decoded = tuple[list[Any], dict[str, Any]]


def round_trip(
    job: JobDefinition, payload: dict[str, Any], max_bytes: int
) -> tuple[ShadowFailure | None, Decoded | None]:
    """Decode ``payload`` as a worker would and encode it again: what went wrong (None: nothing),
    and the decoded arguments (None when decoding failed)."""
    try:
        args, kwargs = job.codec.decode(payload)
    except QueueError as exc:
        return ShadowFailure(_param_of(exc, payload), "?", f"decode failed: {exc}"), None
    return _compare(job, payload, (args, kwargs), max_bytes), (args, kwargs)


def _compare(
    job: JobDefinition, payload: dict[str, Any], decoded: Decoded, max_bytes: int
) -> ShadowFailure | None:
    try:
        again = job.codec.encode(tuple(decoded[0]), dict(decoded[1]), max_bytes)
    except QueueError as exc:
        param = getattr(exc, "param", None) or _param_of(exc, payload)
        return ShadowFailure(param, _type_of(decoded, job, param), f"re-encode failed: {exc}")
    if getattr(payload, "json", None) == again.json:  # the same text: nothing to compare
        return None
    for name in sorted(payload.keys() | again.keys()):
        if _canonical(payload.get(name)) != _canonical(again.get(name)):
            kind = _type_of(decoded, job, name)
            return ShadowFailure(name, kind, "the decoded value re-encodes to different JSON")
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


def _param_of(exc: Exception, payload: dict[str, Any]) -> str:
    text = str(exc)
    return next((name for name in payload if f"'{name}'" in text), "?")


def _type_of(decoded: Decoded, job: JobDefinition, name: str) -> str:
    names = list(job.codec.signature.parameters)
    values = dict(zip(names, decoded[0], strict=False)) | decoded[1]
    if name not in values:
        return "?"
    kind = type(values[name])
    return f"{kind.__module__}.{kind.__qualname__}"


_recorders: weakref.WeakKeyDictionary[Any, ShadowRecorder] = weakref.WeakKeyDictionary()
_recorders_lock = threading.Lock()


def recorder_for(owner: Any, make: Callable[[], ShadowRecorder]) -> ShadowRecorder:
    """The recorder of ``owner`` (a Runtime), made on first use."""
    with _recorders_lock:
        found = _recorders.get(owner)
        if found is None:
            found = _recorders[owner] = make()
        return found


def flush_for(owner: Any) -> None:
    """Flush and close ``owner``'s recorder, if it has one (``Runtime.close`` calls it)."""
    with _recorders_lock:
        found = _recorders.pop(owner, None)
    if found is not None:
        found.close()


@atexit.register
def _flush_all() -> None:
    with _recorders_lock:
        found = list(_recorders.values())
    for recorder in found:
        recorder.flush()
