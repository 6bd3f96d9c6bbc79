"""The composition root: lazy, replaceable, configured from the sources."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from queue_runtime import Mode, Settings, configure, current
from queue_runtime import runtime as runtime_module


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No pyproject, no QUEUE_RUNTIME_* variables, no configured Runtime, warning not yet given."""
    monkeypatch.chdir(tmp_path)
    for var in ("QUEUE_RUNTIME_DATABASE_URL", "QUEUE_RUNTIME_REDIS_URL", "QUEUE_RUNTIME_MODE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(runtime_module, "_current", None)
    monkeypatch.setattr(runtime_module, "_warned", runtime_module.threading.Event())


def test_configure_connects_nothing() -> None:
    rt = configure(database_url="postgresql://nobody@127.0.0.1:1/none")
    assert rt.mode is Mode.QUEUE and not rt.opened
    rt.close()


def test_configure_replaces_and_closing_the_current_unsets_it() -> None:
    first = configure(Settings(mode=Mode.INLINE))
    second = configure(Settings(mode=Mode.INLINE), schema="other")
    assert current() is second and second.settings.schema_name == "other"
    second.close()
    assert current() is not second and current() is not first


def test_current_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUEUE_RUNTIME_DATABASE_URL", "postgresql://env/db")
    assert current().settings.database_url == "postgresql://env/db"
    assert current().mode is Mode.QUEUE


def test_implicit_inline_mode_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="queue_runtime"):
        configure()
        configure()
        current()
    warnings = [r for r in caplog.records if "run INLINE" in r.getMessage()]
    assert len(warnings) == 1
    assert current().mode is Mode.INLINE


def test_explicit_inline_mode_is_not_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="queue_runtime"):
        configure(mode="inline")
    assert caplog.records == []
