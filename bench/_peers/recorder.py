"""What every tool's no-op job does: note when it started, on the host clock.

Each worker process appends ``<seq> <enqueued at> <started at>`` lines to its own file in
``$BENCH_STARTS_DIR``. Line buffering means a line is on disk as soon as the
job has started, so the bench can count progress and a killed worker loses
nothing. The enqueuer puts ``time.time()`` in the payload just before calling
enqueue: both ends read the same clock (CLOCK_REALTIME of one machine).
"""

from __future__ import annotations

import os
import time
from io import TextIOWrapper
from pathlib import Path
from typing import NamedTuple

STARTS_DIR_ENV = "BENCH_STARTS_DIR"

_sink: TextIOWrapper | None = None


def _open_sink() -> TextIOWrapper:
    global _sink
    if _sink is None:
        directory = Path(os.environ[STARTS_DIR_ENV])
        _sink = open(directory / f"starts-{os.getpid()}.txt", "a", buffering=1)  # noqa: SIM115
    return _sink


class Start(NamedTuple):
    enqueued_at: float  # 0.0 in the throughput phases
    started_at: float


def record_start(seq: int, enqueued_at: float) -> None:
    _open_sink().write(f"{seq} {enqueued_at:.6f} {time.time():.6f}\n")


def read_starts(directory: Path) -> dict[int, Start]:
    """Start per job sequence number (the first one, if a job ran twice)."""
    starts: dict[int, Start] = {}
    for path in sorted(directory.glob("starts-*.txt")):
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) == 3:  # a line being written right now may be partial
                starts.setdefault(int(fields[0]), Start(float(fields[1]), float(fields[2])))
    return starts


def count_starts(directory: Path) -> int:
    return sum(path.read_bytes().count(b"\n") for path in directory.glob("starts-*.txt"))
