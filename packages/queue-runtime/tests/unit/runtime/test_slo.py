"""``slo_breach``: which health breaches which SLO, and the one-line reason the audit keeps."""

from __future__ import annotations

import pytest

from queue_runtime.config import JobConfig, SloPolicy
from queue_runtime.errors import ConfigError
from queue_runtime.gate import slo_breach
from queue_runtime.store import JobHealth

FLAKY = "app.flaky"
POLICY = SloPolicy(max_failure_rate=0.2, max_dead=5, max_lag_seconds=60, window_seconds=300)


def health(succeeded: int = 0, failed: int = 0, dead: int = 0, lag: float = 0.0) -> JobHealth:
    return JobHealth("app.job", succeeded, failed, dead, lag)


def test_a_healthy_job_holds() -> None:
    assert slo_breach(POLICY, health(succeeded=90, failed=10, dead=1, lag=5)) is None


def test_failure_rate_is_judged_from_min_attempts_on() -> None:
    assert slo_breach(POLICY, health(succeeded=1, failed=3)) is None  # 4 attempts: no rate yet
    assert slo_breach(POLICY, health(succeeded=5, failed=5)) == (
        "failure rate 0.50 > 0.2 (5 of 10 attempts failed over 300s)"
    )


def test_dead_letters_and_lag() -> None:
    assert slo_breach(POLICY, health(succeeded=100, dead=6)) == "6 dead letters > 5 over 300s"
    assert slo_breach(POLICY, health(succeeded=100, lag=61.4)) == "lag 61s > 60s"


def test_thresholds_are_optional() -> None:
    assert slo_breach(SloPolicy(), health(failed=100, dead=100, lag=1e6)) is None


def test_slo_is_read_from_the_job_table() -> None:
    from queue_runtime._settings_load import load_settings

    table = {FLAKY: {"slo": {"max_failure_rate": 0.2, "window_seconds": 60}}}
    settings = load_settings(env={}, jobs=table)
    assert settings.jobs[FLAKY] == JobConfig(slo=SloPolicy(max_failure_rate=0.2, window_seconds=60))
    with pytest.raises(ConfigError, match="max_failure_rate"):
        load_settings(env={}, jobs={FLAKY: {"slo": {"max_failure_rate": 2}}})
    with pytest.raises(ConfigError, match="max_failures"):
        load_settings(env={}, jobs={FLAKY: {"slo": {"max_failures": 2}}})
