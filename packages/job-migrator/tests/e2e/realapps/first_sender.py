"""SIGKILL the worker that sent the suite's first mail, once, between two of its jobs.

The bridges (:mod:`ihatemoney_bridge`, :mod:`django_bridge`) call :func:`kill_once` right
after they have waited for a job to finish and replayed the mail its worker recorded:
the job is acknowledged and the next one is not queued yet, so the kill never lands
between a worker's send and its acknowledgement (a mail sent twice, rightly, with the
same content: the runtime's own fault tests cover that case). Enabled by
``$REALAPP_KILL_FIRST_SENDER``, the path the killed pid is written to.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

DEADLINE = float(os.environ.get("REALAPP_JOB_DEADLINE", "60"))


def kill_once(pid: int) -> None:
    path = os.environ.get("REALAPP_KILL_FIRST_SENDER")
    if not path or Path(path).exists():
        return
    os.kill(pid, signal.SIGKILL)  # a worker the e2e test started (the pid its outbox line gives)
    deadline = time.monotonic() + DEADLINE
    while not _dead(pid):
        if time.monotonic() > deadline:
            raise AssertionError(f"worker {pid} still alive {DEADLINE:.0f}s after SIGKILL")
        time.sleep(0.02)
    Path(path).write_text(str(pid))


def _dead(pid: int) -> bool:
    """Gone, or a zombie its parent (the e2e test) has not reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"
