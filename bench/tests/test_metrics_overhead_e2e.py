"""bench/metrics_overhead.py end to end, tiny: both sides drain and the ratio is printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def test_metrics_overhead_drains_with_per_job_metrics_on_and_off() -> None:
    argv = [sys.executable, "-m", "bench.metrics_overhead", "--jobs=300", "--repeat=1"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = re.findall(r"per-job metrics (on |off)\s+([\d,]+) jobs/s", proc.stdout)
    assert [side.strip() for side, _ in runs] == ["on", "off"]
    assert all(int(rate.replace(",", "")) > 0 for _, rate in runs)
    assert re.search(r"on / off: \d+\.\d{3} \(cost [+-]\d+\.\d% of drain throughput\)", proc.stdout)
    assert re.search(r"worker CPU per job: on [\d.]+ us, off [\d.]+ us", proc.stdout)
