"""The seam every benchmarked queue implements, and helpers the adapters share."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Protocol

from bench._peers.procs import WorkerSpec

NOOP = "bench_noop"  # the job / entrypoint / task name in every tool


def payloads(first_seq: int, count: int) -> list[dict[str, float]]:
    """Job arguments for the throughput phases: a sequence number and a dummy stamp."""
    return [{"i": seq, "t": 0.0} for seq in range(first_seq, first_seq + count)]


def stamped(seq: int) -> dict[str, float]:
    """Job arguments for the latency phase: the enqueue time, taken just before enqueue."""
    return {"i": seq, "t": time.time()}


def paced_slots(count: int, rate: float) -> Iterator[tuple[int, float]]:
    """(index, monotonic time the index is due) for a steady ``rate`` per second."""
    start = time.monotonic()
    for index in range(count):
        yield index, start + index / rate


class Tool(Protocol):
    name: str
    bulk_api: str  # which batch API bulk enqueue uses, for the report
    runner: str  # how the worker processes run, for the report
    remaining_sql: str  # jobs not finished yet (queued or running)

    def install(self, dsn: str) -> None: ...
    def enqueue_single(self, dsn: str, jobs: list[dict[str, float]]) -> None: ...
    def enqueue_bulk(self, dsn: str, jobs: list[dict[str, float]], batch: int) -> None: ...
    def enqueue_paced(self, dsn: str, first_seq: int, count: int, rate: float) -> list[float]:
        """Enqueue one by one at ``rate``/s; returns each enqueue call's duration (s)."""
        ...

    def worker(self, dsn: str) -> WorkerSpec: ...
    def cleanup(self) -> None: ...
