"""Building :class:`Settings` from its sources, later ones winning.

defaults -> ``[tool.queue_runtime]`` of the app's ``pyproject.toml`` (the first
one found from the working directory upward) -> environment
(``QUEUE_RUNTIME_DATABASE_URL``, ``QUEUE_RUNTIME_REDIS_URL``,
``QUEUE_RUNTIME_MODE``, and the framework context's ``QUEUE_RUNTIME_DJANGO_SETTINGS``,
``QUEUE_RUNTIME_FLASK_APP``, ``QUEUE_RUNTIME_SERVER_NAME``, ``QUEUE_RUNTIME_URL_SCHEME``)
-> explicit overrides. Called by ``configure()`` and
never at import time.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from queue_runtime.config import Settings
from queue_runtime.errors import BadRedisUrl, ConfigError

ENV_VARS = {
    "QUEUE_RUNTIME_DATABASE_URL": "database_url",
    "QUEUE_RUNTIME_REDIS_URL": "redis_url",
    "QUEUE_RUNTIME_MODE": "mode",
    "QUEUE_RUNTIME_DJANGO_SETTINGS": "django_settings",
    "QUEUE_RUNTIME_FLASK_APP": "flask_app",
    "QUEUE_RUNTIME_SERVER_NAME": "server_name",
    "QUEUE_RUNTIME_URL_SCHEME": "url_scheme",
}


def find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def from_pyproject(path: Path | None) -> dict[str, Any]:
    """The ``[tool.queue_runtime]`` table, or nothing."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    table = data.get("tool", {}).get("queue_runtime", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.queue_runtime] must be a table")
    return table


def from_env(env: Mapping[str, str]) -> dict[str, Any]:
    return {field: env[var] for var, field in ENV_VARS.items() if env.get(var)}


def load_settings(
    cwd: Path | None = None, env: Mapping[str, str] | None = None, **overrides: Any
) -> Settings:
    """Settings from every source; an invalid combination raises ConfigError naming the fields."""
    merged: dict[str, Any] = {}
    merged.update(_normalised(from_pyproject(find_pyproject(cwd or Path.cwd()))))
    merged.update(from_env(os.environ if env is None else env))
    merged.update(_normalised(overrides))
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise _error(exc) from exc


def with_overrides(settings: Settings, **overrides: Any) -> Settings:
    """``settings`` with some fields replaced, validated again."""
    data = settings.model_dump(by_alias=False)
    data.update(_normalised(overrides))
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise _error(exc) from exc


def _normalised(values: Mapping[str, Any]) -> dict[str, Any]:
    """TOML keys may use dashes (``database-url``); ``schema`` is the alias of ``schema_name``."""
    out = {key.replace("-", "_"): value for key, value in values.items()}
    if "schema" in out:
        out["schema_name"] = out.pop("schema")
    return out


def _error(exc: ValidationError) -> ConfigError:
    """ConfigError naming the fields; BadRedisUrl when the Redis URL alone is wrong."""
    if all(err["loc"][:1] == ("redis_url",) for err in exc.errors()):
        return BadRedisUrl(_describe(exc))
    return ConfigError(_describe(exc))


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {_message(err['msg'])}"
        for err in exc.errors()
    )


def _message(text: str) -> str:
    """pydantic's message without the "Value error, " it puts before our validators' own."""
    return text.removeprefix("Value error, ")
