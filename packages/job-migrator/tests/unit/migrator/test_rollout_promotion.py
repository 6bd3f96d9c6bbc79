"""Promotion on shadow evidence: ``migrator rollout set J async|N%`` against a real schema.

The app's jobs run inline in this process on a runtime with the database
(rollout inline), which checks each call's argument round trip and flushes the
counts when it closes; the command then reads them through the gate store.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from queue_runtime import Settings, configure, migrate
from queue_runtime.gate import fingerprint, get_rollout, rollout_history, set_rollout
from queue_runtime.runtime import Runtime
from queue_runtime.shadow_model import ShadowDelta
from queue_runtime.testing import unique_name
from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg]

MIN_CALLS = 3

APP = """
from dataclasses import dataclass

from queue_runtime import job


@dataclass
class Doubling:
    n: int

    def __post_init__(self) -> None:  # what a worker would rebuild is not what was sent
        self.n *= 2


@job(name="{app}.resize", idempotent=True)
def resize(image: int) -> int:
    return image


@job(name="{app}.notify", idempotent=True)
def notify(what, note=None):
    return None
"""


@dataclass
class App:
    root: Path
    name: str
    module: ModuleType
    settings: Settings

    def run(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, [*args, "--project", str(self.root)])
        return result.exit_code, result.output

    def job(self, short: str) -> str:
        return f"{self.name}.{short}"

    def inline_calls(self, short: str, *calls: tuple[object, ...]) -> None:
        """Run ``short`` inline once per call; closing the runtime flushes the evidence."""
        runtime = configure(self.settings)
        try:
            set_rollout(runtime, self.job(short), "inline", who="test")
            for args in calls:
                getattr(self.module, short).enqueue(*args)
        finally:
            runtime.close()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    name = unique_name()
    (tmp_path / f"{name}.py").write_text(APP.replace("{app}", name))
    table = f'[tool.queue_runtime]\ndatabase_url = "{pg_admin_url()}"\nschema = "{name}"\n'
    (tmp_path / "pyproject.toml").write_text(table + f"shadow_min_calls = {MIN_CALLS}\n")
    settings = Settings(database_url=pg_admin_url(), schema=name, shadow_min_calls=MIN_CALLS)
    migrate(settings)
    sys.path.insert(0, str(tmp_path))
    try:
        yield App(tmp_path, name, importlib.import_module(name), settings)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
        with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def stored_mode(app: App, job: str) -> str:
    runtime = Runtime(app.settings)
    try:
        return get_rollout(runtime, job).label
    finally:
        runtime.close()


def test_refused_until_enough_clean_inline_calls_then_allowed(app: App) -> None:
    job = app.job("resize")
    code, out = app.run("rollout", "set", job, "async", "--app", app.name)
    assert code == 2 and f"{job}: no shadow evidence (0 checked calls, 3 needed)" in out

    app.inline_calls("resize", (1,), (2,))
    code, out = app.run("rollout", "set", job, "25%", "--app", app.name)
    assert code == 2 and f"{job}: only 2 of 3 checked calls" in out
    assert stored_mode(app, job) == "inline"

    app.inline_calls("resize", (3,))
    code, out = app.run("rollout", "set", job, "25%", "--app", app.name)
    assert code == 0 and f"{job}: 25%" in out
    assert stored_mode(app, job) == "25%"


def test_one_failed_round_trip_refuses_whatever_the_count(app: App) -> None:
    job = app.job("notify")
    doubling = app.module.Doubling
    app.inline_calls("notify", *[(i,) for i in range(5)], (doubling(1),))
    code, out = app.run("rollout", "set", job, "async", "--app", app.name)
    assert code == 2
    assert f"{job}: shadow evidence shows 1 failed round trip(s) and 0 unencodable" in out
    assert f"what: {app.name}.Doubling: the decoded value re-encodes to different JSON" in out
    assert stored_mode(app, job) == "inline"


def test_an_unencodable_fallback_refuses(app: App) -> None:
    job = app.job("notify")
    app.inline_calls("notify", *[(i,) for i in range(5)], (object(),))
    code, out = app.run("rollout", "set", job, "async", "--app", app.name)
    assert code == 2 and "0 failed round trip(s) and 1 unencodable fallback(s)" in out
    assert "e.g. what: builtins.object" in out


def test_force_promotes_and_is_audited_with_who_and_why(app: App) -> None:
    job = app.job("notify")
    app.inline_calls("notify", (app.module.Doubling(1),))
    code, out = app.run(
        "rollout", "set", job, "async", "--app", app.name, "--force", "--by", "ann",
        "--reason", "the codec is fixed in 1.2",
    )  # fmt: skip
    assert code == 0 and f"{job}: async" in out
    runtime = Runtime(app.settings)
    try:
        latest = rollout_history(runtime, job, limit=1)[0]
    finally:
        runtime.close()
    assert (latest.changed_by, latest.after_label) == ("ann", "async")
    assert latest.reason == (
        "forced past the shadow evidence (1 checked, 1 failed, 0 unencodable, 3 needed); "
        "reason: the codec is fixed in 1.2"
    )
    assert latest.changed_at is not None


def test_inline_is_never_refused(app: App) -> None:
    job = app.job("notify")
    app.inline_calls("notify", (object(),))
    code, out = app.run("rollout", "set", job, "inline", "--app", app.name)
    assert code == 0 and f"{job}: inline" in out


def test_another_jobs_evidence_does_not_promote_this_one(app: App) -> None:
    app.inline_calls("resize", (1,), (2,), (3,), (4,))
    code, out = app.run("rollout", "set", app.job("notify"), "async", "--app", app.name)
    assert code == 2 and "no shadow evidence" in out


def test_evidence_of_older_code_is_stale_for_the_apps_code(app: App) -> None:
    job = app.job("resize")
    runtime = Runtime(app.settings)
    try:
        runtime.gate_store.add_shadow([ShadowDelta(job, "older-code", checked=1000)])
    finally:
        runtime.close()
    code, out = app.run("rollout", "set", job, "async", "--app", app.name)
    assert code == 2 and "no shadow evidence" in out  # --app: the current code's record only
    app.inline_calls("resize", (1,), (2,), (3,))
    code, out = app.run("rollout", "set", job, "async", "--app", app.name)
    assert code == 0, out
    runtime = Runtime(app.settings)
    try:
        current = runtime.gate_store.shadow_evidence(job)[0]
    finally:
        runtime.close()
    assert current.fingerprint == fingerprint(app.module.resize)


def test_status_shows_the_evidence_in_the_table_and_as_json(app: App) -> None:
    app.inline_calls("resize", (1,), (2,), (3,))
    app.inline_calls("notify", (object(),))
    code, out = app.run("rollout", "status", "--json")
    assert code == 0, out
    rows = {row["job"]: row for row in json.loads(out)}
    resize, notify = rows[app.job("resize")]["shadow"], rows[app.job("notify")]["shadow"]
    assert (resize["checked"], resize["failed"], resize["promotable"]) == (3, 0, True)
    assert (notify["unencodable"], notify["promotable"]) == (1, False)
    assert notify["examples"][0]["param"] == "what" and notify["examples"][0]["fallback"]
    code, out = app.run("rollout", "status")
    assert code == 0 and "3 checked, 0 failed, 0 unencodable (promotable)" in out
