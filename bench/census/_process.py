"""A child process with a deadline: on timeout its whole process group is killed."""

from __future__ import annotations

import os
import signal
import subprocess


def run_killable(command: list[str], timeout: float, env: dict[str, str]) -> tuple[int | None, str]:
    """``(exit code, stderr)``; the exit code is None when ``timeout`` passed, and then the
    process and everything it started (its session) are SIGKILLed."""
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return None, err
    return proc.returncode, err
