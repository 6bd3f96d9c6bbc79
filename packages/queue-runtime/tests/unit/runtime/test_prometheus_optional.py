"""Without prometheus_client the metrics still count in-process; serving them says what to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKED = "import sys; sys.modules['prometheus_client'] = None\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    script = BLOCKED + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )


def test_counters_count_without_prometheus_client() -> None:
    done = _run(
        """
        from queue_runtime.metrics import WorkerMetrics
        from queue_runtime.gate._metrics import count_gate_inline, gate_inline_counts
        m = WorkerMetrics()
        m.job_completed("batch", 3)
        m.claim_latency.labels("batch").observe(0.5)
        m.queue_depth.labels("batch").set(7)
        count_gate_inline("app.jobs.charge")
        print(m.value("jobs_completed_total", "batch"), m.value("claim_latency_seconds_count", "batch"),
              m.value("queue_depth", "batch"), gate_inline_counts())
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(maxsplit=3)[:3] == ["3.0", "1.0", "7.0"]
    assert "'app.jobs.charge': 1" in done.stdout


def test_metrics_port_without_prometheus_client_fails_in_one_line() -> None:
    done = _run(
        """
        from queue_runtime.metrics import WorkerMetrics
        from queue_runtime.errors import QueueError
        try:
            WorkerMetrics().serve(0)
        except QueueError as exc:
            print(exc)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().count("\n") == 0
    assert "pip install 'queue-runtime[prometheus]'" in done.stdout
