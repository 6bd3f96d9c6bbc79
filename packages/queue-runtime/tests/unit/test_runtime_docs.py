"""docs/runtime.md must keep up with the code: every setting, command and metric is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from queue_runtime import cli
from queue_runtime.config import JobConfig, PoolConfig, RetryPolicy, Settings
from queue_runtime.metrics import WorkerMetrics

DOCS = Path(__file__).resolve().parents[4] / "docs"
RUNTIME_MD = DOCS / "runtime.md"


@pytest.fixture(scope="module")
def text() -> str:
    return RUNTIME_MD.read_text(encoding="utf-8")


def test_every_settings_field_is_in_the_reference_table(text: str) -> None:
    documented = set(re.findall(r"^\| `(\w+)`", text, flags=re.MULTILINE))
    fields = {info.alias or name for name, info in Settings.model_fields.items()}
    assert fields - documented == set()


@pytest.mark.parametrize("model", [PoolConfig, RetryPolicy, JobConfig])
def test_every_nested_config_field_is_named(text: str, model: type) -> None:
    missing = [name for name in model.model_fields if f"`{name}`" not in text]
    assert missing == []


def test_every_cli_command_is_documented(text: str) -> None:
    parser = cli._parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert [name for name in commands if f"queue-runtime {name}" not in text] == []
    assert all(
        f"queue-runtime dlq {action}" in text for action in ("list", "show", "replay", "purge")
    )


def test_every_exported_metric_is_documented(text: str) -> None:
    names = {metric.name for metric in WorkerMetrics().registry.collect()}
    # prometheus_client reports counters without their _total suffix
    missing = [n for n in names if f"`{n}`" not in text and f"`{n}_total`" not in text]
    assert missing == []


def test_runbooks_start_from_a_metric_and_link_back() -> None:
    for name in ("postgres-degraded", "redis-degraded", "backlog-growing", "retry-storm"):
        body = (DOCS / "runbooks" / f"{name}.md").read_text(encoding="utf-8")
        sections = re.findall(r"^## \d\. (\w+)", body, flags=re.MULTILINE)
        assert sections == ["The", "Diagnosis", "Actions"], name
        assert f"runbooks/{name}.md" in RUNTIME_MD.read_text(encoding="utf-8")


def test_every_public_name_is_documented(text: str) -> None:
    import queue_runtime

    assert [name for name in queue_runtime.__all__ if f"`{name}`" not in text] == []
