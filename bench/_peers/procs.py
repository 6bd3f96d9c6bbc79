"""Worker processes: started in their own session, always stopped by PID.

Each worker runs in a new session (so its process group id is its PID); when
it ignores SIGTERM past the grace period the bench kills that group, which
holds only processes the bench started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class WorkerSpec:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class WorkerGroup:
    """The worker processes of one tool for one phase."""

    log_dir: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, spec: WorkerSpec, count: int, extra_env: dict[str, str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **spec.env, **extra_env}
        for index in range(count):
            log = open(self.log_dir / f"worker-{index}.log", "ab")  # noqa: SIM115
            proc = subprocess.Popen(
                spec.argv,
                env=env,
                cwd=REPO_ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()  # the child holds its own descriptor
            self.processes.append(proc)

    def check_alive(self) -> None:
        for proc in self.processes:
            if proc.poll() is not None:
                tail = self._log_tail()
                raise RuntimeError(f"worker pid {proc.pid} exited with {proc.returncode}: {tail}")

    def _log_tail(self) -> str:
        """The last lines of each worker log: usually the exception that ended it."""
        tails = []
        for path in sorted(self.log_dir.glob("worker-*.log")):
            lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
            tails.append(" / ".join(lines[-2:]))
        return " | ".join(tails)[-400:]

    def stop(self, grace: float = 5.0) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in self.processes:
            remaining = max(0.0, deadline - time.monotonic())
            try:
                proc.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        self.processes.clear()
