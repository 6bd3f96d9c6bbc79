"""``migrator plan --check`` on the gate's steps: guard, certification, rollout, on a real schema."""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from migrator.plan.check import GateChecks
from migrator.plan.config import load_check_settings
from queue_runtime import Settings, migrate
from queue_runtime.gate import certify, fingerprint, revoke, set_rollout
from queue_runtime.gate._guard import guarded_callable
from queue_runtime.runtime import Runtime
from queue_runtime.shadow_model import ShadowDelta
from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg]

JOBS = """
from queue_runtime import job
from queue_runtime.registry import Registry


@job(name="{pkg}.jobs.charge", idempotency="non_idempotent", registry=Registry())
def charge(order: int) -> int:
    return order
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[GateChecks, Runtime, Any]]:
    pkg = f"gchk_{secrets.token_hex(4)}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "jobs.py").write_text(JOBS.replace("{pkg}", pkg))
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.queue_runtime]\ndatabase_url = "{pg_admin_url()}"\nschema = "{pkg}"\n'
    )
    settings = Settings(database_url=pg_admin_url(), schema=pkg)
    migrate(settings)
    runtime = Runtime(settings)
    checks = GateChecks(load_check_settings(tmp_path))
    try:
        ok, _ = checks.current_fingerprint(f"{pkg}.jobs.charge")  # imports it from the root
        assert ok
        yield checks, runtime, sys.modules[f"{pkg}.jobs"].charge
    finally:
        runtime.close()
        for name in [m for m in sys.modules if m == pkg or m.startswith(pkg + ".")]:
            del sys.modules[name]
        with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(pkg)))


def test_nothing_in_place_nothing_ticked(project: tuple[GateChecks, Runtime, Any]) -> None:
    checks, _, charge = project
    assert checks.guard(charge.name) == (
        False,
        f"no keyed run of `{charge.name}` has completed through the execution guard yet",
    )
    ok, why = checks.certified(charge.name)
    assert not ok and "no valid certification" in why
    ok, why = checks.rollout(charge.name)
    assert not ok and "the gate keeps it inline" in why


def test_certified_for_the_current_code_ticks_loadtest_and_rollout(
    project: tuple[GateChecks, Runtime, Any],
) -> None:
    checks, runtime, charge = project
    certify(runtime, charge.name, fingerprint(charge), {"lost": 0, "passed": True}, who="loadtest")
    ok, why = checks.certified(charge.name)
    assert ok and "certified by loadtest" in why and "for the current code" in why
    ok, why = checks.rollout(charge.name)
    assert ok and "the default (async) applies" in why

    set_rollout(runtime, charge.name, "25%", who="bob")
    ok, why = checks.rollout(charge.name)
    assert not ok and why.startswith("rollout 25% (set by bob); shadow evidence: none;")
    set_rollout(runtime, charge.name, "async", who="bob")
    assert checks.rollout(charge.name)[0]

    revoke(runtime, charge.name)
    assert not checks.certified(charge.name)[0]
    assert not checks.rollout(charge.name)[0]


def test_a_certification_of_older_code_does_not_tick(
    project: tuple[GateChecks, Runtime, Any],
) -> None:
    checks, runtime, charge = project
    certify(runtime, charge.name, "f" * 64, {"lost": 0, "passed": True}, who="loadtest")
    ok, why = checks.certified(charge.name)
    assert not ok and "the code changed since" in why


def test_a_guarded_completion_ticks_the_guard(project: tuple[GateChecks, Runtime, Any]) -> None:
    checks, runtime, charge = project
    guarded_callable(runtime, charge, "order-1", None)(1)
    assert checks.guard(charge.name) == (
        True,
        "1 keyed run(s) completed through the execution guard",
    )


def test_an_unmigrated_schema_is_evidence(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.queue_runtime]\ndatabase_url = "{pg_admin_url()}"\nschema = "gchk_none"\n'
    )
    checks = GateChecks(load_check_settings(tmp_path))
    ok, why = checks.certified("app.jobs.charge")
    assert not ok and "no gate tables" in why


def test_an_unimportable_job_is_evidence(tmp_path: Path) -> None:
    checks = GateChecks(load_check_settings(tmp_path))
    ok, why = checks.current_fingerprint("no_such_pkg_x.jobs.charge")
    assert not ok and "cannot import" in why


def test_the_rollout_step_shows_the_shadow_evidence_of_the_current_code(
    project: tuple[GateChecks, Runtime, Any],
) -> None:
    checks, runtime, charge = project
    set_rollout(runtime, charge.name, "inline", who="bob")
    stale = ShadowDelta(charge.name, "older-code", checked=500, failed=2)
    runtime.gate_store.add_shadow([stale, ShadowDelta(charge.name, fingerprint(charge), 120)])
    ok, why = checks.rollout(charge.name)
    assert not ok
    assert why == (
        "rollout inline (set by bob); shadow evidence: 120 checked, 0 failed, 0 unencodable;"
        " promotable"
    )
