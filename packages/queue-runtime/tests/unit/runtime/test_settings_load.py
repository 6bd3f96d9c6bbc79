"""Settings sources: defaults -> pyproject -> environment -> explicit, later wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from queue_runtime._settings_load import load_settings, with_overrides
from queue_runtime.config import Mode
from queue_runtime.errors import ConfigError

PYPROJECT = """
[project]
name = "shop"

[tool.queue_runtime]
database-url = "postgresql://from-file/db"
schema = "shop_queue"
lease_ttl = 12.5

[tool.queue_runtime.pools.reports]
concurrency = 2

[tool.queue_runtime.pools.batch]
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    nested = tmp_path / "src" / "shop"
    nested.mkdir(parents=True)
    return nested


def test_defaults_without_any_source(tmp_path: Path) -> None:
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.database_url is None and settings.effective_mode is Mode.INLINE
    assert settings.schema_name == "queue_runtime"


def test_pyproject_is_found_from_a_subdirectory(app: Path) -> None:
    settings = load_settings(cwd=app, env={})
    assert settings.database_url == "postgresql://from-file/db"
    assert (settings.schema_name, settings.lease_ttl) == ("shop_queue", 12.5)
    assert sorted(settings.pools) == ["batch", "reports"]
    assert settings.effective_mode is Mode.QUEUE


def test_environment_beats_pyproject_and_explicit_beats_both(app: Path) -> None:
    env = {"QUEUE_RUNTIME_DATABASE_URL": "postgresql://from-env/db", "QUEUE_RUNTIME_MODE": "inline"}
    from_env = load_settings(cwd=app, env=env)
    assert from_env.database_url == "postgresql://from-env/db" and from_env.mode is Mode.INLINE
    explicit = load_settings(
        cwd=app, env=env, database_url="postgresql://explicit/db", mode="queue"
    )
    assert explicit.database_url == "postgresql://explicit/db" and explicit.mode is Mode.QUEUE


def test_invalid_values_name_the_field(app: Path) -> None:
    with pytest.raises(ConfigError, match="lease_ttl"):
        load_settings(cwd=app, env={}, lease_ttl=-1)
    with pytest.raises(ConfigError, match="mode"):
        load_settings(cwd=app, env={"QUEUE_RUNTIME_MODE": "sometimes"})


def test_unreadable_pyproject_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.queue_runtime\n")
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(cwd=tmp_path, env={})


def test_overrides_keep_the_rest(app: Path) -> None:
    base = load_settings(cwd=app, env={})
    changed = with_overrides(base, schema="other", max_payload_bytes=10)
    assert (changed.schema_name, changed.max_payload_bytes) == ("other", 10)
    assert changed.database_url == base.database_url and changed.pools == base.pools
