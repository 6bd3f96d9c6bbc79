"""The gate on the real PostgreSQL: gated jobs run inline until certified for their current code."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
import pytest
from psycopg import sql

from queue_runtime import Settings, configure, job
from queue_runtime.config import GateAction, JobConfig
from queue_runtime.gate import (
    ClassificationConflict,
    GateClosed,
    RolloutMode,
    certification,
    certifications,
    certify,
    fingerprint,
    gate_decision,
    gate_inline_counts,
    revoke,
    set_rollout,
)
from queue_runtime.gate._model import CertificationRefused
from queue_runtime.handle import InlineHandle
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime

pytestmark = [pytest.mark.pg]

jobs = Registry()
ran: list[int] = []


@job(name="tests.gate.charge", idempotent=False, registry=jobs)
def charge(order: int) -> int:
    ran.append(order)
    return order * 10


@job(name="tests.gate.refund", idempotency="unsafe", registry=jobs)
def refund(order: int) -> int:
    return -order


@job(name="tests.gate.thumbnail", idempotent=True, registry=jobs)
def thumbnail(image: int) -> str:
    return f"thumb-{image}"


FIGURES = {
    "throughput": 950.0,
    "lost": 0,
    "duplicate_completions": 0,
    "p99_ms": 41.0,
    "passed": True,
}


def queued(settings: Settings, name: str) -> int:
    query = sql.SQL("SELECT count(*) FROM {}.jobs WHERE name = %s").format(
        sql.Identifier(settings.schema_name)
    )
    with psycopg.connect(settings.database_url or "") as conn:
        row = conn.execute(query, (name,)).fetchone()
    assert row is not None
    return int(row[0])


def test_uncertified_non_idempotent_job_runs_inline_even_at_async(runtime: Runtime) -> None:
    ran.clear()
    set_rollout(runtime, charge.name, RolloutMode.ASYNC, who="test")
    before = gate_inline_counts().get(charge.name, 0)

    handle = charge.enqueue(7)

    assert isinstance(handle, InlineHandle)
    assert handle.result() == 70
    assert ran == [7]  # ran in-process, exactly as before the migration
    assert queued(runtime.settings, charge.name) == 0
    assert gate_inline_counts()[charge.name] == before + 1
    decision = gate_decision(runtime, charge)
    assert not decision.run_async
    assert "not certified" in decision.reason


def test_unsafe_and_idempotent_declarations(runtime: Runtime) -> None:
    assert isinstance(refund.enqueue(3), InlineHandle)  # unsafe: gated
    handle = thumbnail.enqueue(3)  # idempotent: not gated, default rollout async
    assert not isinstance(handle, InlineHandle)
    assert queued(runtime.settings, thumbnail.name) == 1


def test_certified_for_the_current_fingerprint_runs_async(runtime: Runtime) -> None:
    fp = fingerprint(charge)
    cert = certify(runtime, charge.name, fp, FIGURES, who="loadtest")

    stored = certification(runtime, charge.name, fp)
    assert stored is not None and stored == cert
    assert (stored.certified_by, stored.figures, stored.revoked_at) == ("loadtest", FIGURES, None)
    handle = charge.enqueue(8)
    assert not isinstance(handle, InlineHandle)
    assert queued(runtime.settings, charge.name) == 1
    assert gate_decision(runtime, charge).run_async


def test_certify_refuses_what_is_not_a_passing_load_test_of_this_code(runtime: Runtime) -> None:
    fp = fingerprint(charge)
    report = {"job": charge.name, "fingerprint": fp, "passed": True}
    refused = [
        ({"lost": 0}, None, "the figures do not say the load test passed"),
        ({**FIGURES, "passed": False}, None, "the figures do not say"),
        (FIGURES, {**report, "job": "app.other"}, "the report is of 'app.other'"),
        (FIGURES, {**report, "spec": {"job": "app.other"}}, r"'app.other' \(spec.job\)"),
        (FIGURES, {**report, "spec": []}, r"None \(spec.job\)"),
        (FIGURES, {**report, "fingerprint": "0" * 64}, "the report is of another fingerprint"),
        (FIGURES, {**report, "passed": False}, "the report's load test did not pass"),
    ]
    for figures, given, reason in refused:
        with pytest.raises(CertificationRefused, match=reason):
            certify(runtime, charge.name, fp, figures, who="loadtest", report=given)
    assert certifications(runtime, charge.name) == []
    cert = certify(runtime, charge.name, fp, FIGURES, who="loadtest", report=report)
    stored = certification(runtime, charge.name, fp)
    assert stored is not None and stored.report == report == cert.report


def test_revoke_closes_the_gate(runtime: Runtime) -> None:
    certify(runtime, charge.name, fingerprint(charge), FIGURES, who="loadtest")
    assert gate_decision(runtime, charge).run_async

    assert revoke(runtime, charge.name) == 1

    assert not gate_decision(runtime, charge).run_async
    assert isinstance(charge.enqueue(9), InlineHandle)
    history = certifications(runtime, charge.name)
    assert len(history) == 1 and history[0].revoked_at is not None
    assert certification(runtime, charge.name) is None


def test_a_certificate_for_another_fingerprint_does_not_open_it(runtime: Runtime) -> None:
    certify(runtime, charge.name, "0" * 64, FIGURES, who="loadtest")
    assert not gate_decision(runtime, charge).run_async


def test_rollout_inline_keeps_a_certified_job_inline(runtime: Runtime) -> None:
    certify(runtime, charge.name, fingerprint(charge), FIGURES, who="loadtest")
    set_rollout(runtime, charge.name, "inline", who="test")
    before = gate_inline_counts().get(charge.name, 0)
    assert isinstance(charge.enqueue(1), InlineHandle)
    assert gate_inline_counts().get(charge.name, 0) == before  # the rollout, not the gate


def test_raise_mode_raises(settings: Settings) -> None:
    rt = configure(settings, gate_action=GateAction.RAISE)
    try:
        with pytest.raises(GateClosed, match="not certified for its current code"):
            charge.enqueue(1)
        certify(rt, charge.name, fingerprint(charge), FIGURES, who="loadtest")
        assert not isinstance(charge.enqueue(1), InlineHandle)
    finally:
        rt.close()


VERSION = """
from queue_runtime import job
from queue_runtime.registry import Registry

def rate():
    return {rate}

@job(name="tests.gate.versioned", idempotency="non_idempotent", registry=Registry())
def pay(order: int) -> int:
    return order * rate()
"""


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def versions(tmp_path: Path) -> Iterator[tuple[Any, Any, Any]]:
    """The same job three times: v1, an identical copy, and v2 with one line changed in a helper."""
    names = ("gate_v1_mod", "gate_v1_copy", "gate_v2_mod")
    for name, rate in zip(names, (2, 2, 3), strict=True):
        (tmp_path / f"{name}.py").write_text(VERSION.format(rate=rate))
    try:
        yield tuple(_load(tmp_path / f"{n}.py", n).pay for n in names)  # type: ignore[misc]
    finally:
        for name in names:
            sys.modules.pop(name, None)


def test_changing_the_code_changes_the_fingerprint_and_closes_the_gate(
    runtime: Runtime, versions: tuple[Any, Any, Any]
) -> None:
    v1, same, v2 = versions
    assert fingerprint(v1) != fingerprint(v2)  # only the helper it calls changed
    certify(runtime, v1.name, fingerprint(v1), FIGURES, who="loadtest")

    assert gate_decision(runtime, v1).run_async
    assert gate_decision(runtime, same).run_async  # the same code, another module name
    assert not isinstance(v1.enqueue(1), InlineHandle)
    handle = v2.enqueue(1)
    assert isinstance(handle, InlineHandle) and handle.result() == 3
    assert not gate_decision(runtime, v2).run_async


def _inventory(tmp_path: Path, qualname: str, verdict: str) -> str:
    path = tmp_path / "inventory.json"
    jobs_ = [{"qualname": qualname, "idempotency": verdict, "confidence": "high"}]
    path.write_text(json.dumps({"schema_version": "1", "root": str(tmp_path), "jobs": jobs_}))
    return str(path)


def test_declared_idempotent_against_the_inventory_is_refused(
    settings: Settings, tmp_path: Path
) -> None:
    inventory = _inventory(tmp_path, thumbnail.name, "non_idempotent")
    rt = configure(settings, inventory_path=inventory)
    try:
        with pytest.raises(ClassificationConflict, match="override_reason"):
            thumbnail.enqueue(1)
    finally:
        rt.close()


def test_override_reason_lets_the_declaration_stand(settings: Settings, tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, thumbnail.name, "unsafe")
    reason = JobConfig(override_reason="writes a cache file; the analyzer sees a write")
    rt = configure(settings, inventory_path=inventory, jobs={thumbnail.name: reason})
    try:
        assert not isinstance(thumbnail.enqueue(1), InlineHandle)
    finally:
        rt.close()


def test_the_inventory_verdict_gates_an_undeclared_job(settings: Settings, tmp_path: Path) -> None:
    @job(name="tests.gate.undeclared", registry=Registry())
    def undeclared(n: int) -> int:
        return n

    inventory = _inventory(tmp_path, undeclared.name, "non_idempotent")
    rt = configure(settings, inventory_path=inventory)
    try:
        assert isinstance(undeclared.enqueue(1), InlineHandle)
    finally:
        rt.close()
    rt = configure(settings)  # no inventory: nothing says it is gated
    try:
        assert not isinstance(undeclared.enqueue(1), InlineHandle)
    finally:
        rt.close()


@job(name="tests.gate.undecided", idempotency="unknown", registry=jobs)
def undecided(n: int) -> int:
    ran.append(n)
    return n + 1


@pytest.mark.parametrize("verdict", [None, "unknown", "needs_key", "non_idempotent", "unsafe"])
def test_a_job_declared_unknown_runs_inline_until_the_inventory_says_idempotent(
    settings: Settings, tmp_path: Path, verdict: str | None
) -> None:
    """``migrator apply`` moves a job the scan could not decide as ``idempotency="unknown"``:
    at ``async`` it still runs in-process until its verdict is decided ``idempotent``."""
    inventory = _inventory(tmp_path, undecided.name, verdict) if verdict else None
    rt = configure(settings, inventory_path=inventory)
    try:
        ran.clear()
        set_rollout(rt, undecided.name, RolloutMode.ASYNC, who="test")
        before = gate_inline_counts().get(undecided.name, 0)
        handle = undecided.enqueue(4)
        assert isinstance(handle, InlineHandle) and handle.result() == 5
        assert ran == [4]
        assert queued(settings, undecided.name) == 0
        assert gate_inline_counts()[undecided.name] == before + 1
        decision = gate_decision(rt, undecided)
        assert not decision.run_async and "not certified" in decision.reason
        if verdict in (None, "unknown"):
            assert "decide it" in decision.reason  # says what opens it
    finally:
        rt.close()


def test_a_job_declared_unknown_goes_async_once_decided_or_certified(
    settings: Settings, tmp_path: Path
) -> None:
    rt = configure(settings, inventory_path=_inventory(tmp_path, undecided.name, "idempotent"))
    try:
        set_rollout(rt, undecided.name, RolloutMode.ASYNC, who="test")
        assert not isinstance(undecided.enqueue(1), InlineHandle)  # decided: not held
        assert queued(settings, undecided.name) == 1
    finally:
        rt.close()
    rt = configure(settings)  # no verdict to read: held, until a load test certifies it
    try:
        assert isinstance(undecided.enqueue(2), InlineHandle)
        certify(rt, undecided.name, fingerprint(undecided), FIGURES, who="loadtest")
        assert not isinstance(undecided.enqueue(3), InlineHandle)
        assert queued(settings, undecided.name) == 2
    finally:
        rt.close()


def test_another_jobs_verdict_or_certification_does_not_open_a_held_job(
    settings: Settings, tmp_path: Path
) -> None:
    """Adversary: the inventory decides a job of another name, a certification is for another
    job or other code: the job moved undecided stays inline."""
    rt = configure(settings, inventory_path=_inventory(tmp_path, thumbnail.name, "idempotent"))
    try:
        set_rollout(rt, undecided.name, RolloutMode.ASYNC, who="test")
        certify(rt, charge.name, fingerprint(charge), FIGURES, who="loadtest")
        certify(rt, undecided.name, fingerprint(charge), FIGURES, who="loadtest")
        assert isinstance(undecided.enqueue(1), InlineHandle)
        assert queued(settings, undecided.name) == 0
    finally:
        rt.close()


def test_a_percentage_rollout_does_not_open_a_held_job(settings: Settings) -> None:
    """The other mode: at 100% every enqueue falls in the async share, and still runs inline."""
    rt = configure(settings)
    try:
        set_rollout(rt, undecided.name, "100%", who="test")
        assert all(isinstance(undecided.enqueue(n), InlineHandle) for n in range(5))
        assert queued(settings, undecided.name) == 0
        assert not gate_decision(rt, undecided).run_async
    finally:
        rt.close()


def test_a_job_declared_unknown_in_raise_mode_raises(settings: Settings) -> None:
    rt = configure(settings, gate_action=GateAction.RAISE)
    try:
        with pytest.raises(GateClosed, match="moved before the analyzer decided"):
            undecided.enqueue(1)
    finally:
        rt.close()


def test_enqueue_many_routes_each_call(runtime: Runtime) -> None:
    ran.clear()
    handles = charge.enqueue_many([((n,), {}) for n in range(3)])
    assert all(isinstance(h, InlineHandle) for h in handles) and ran == [0, 1, 2]
    certify(runtime, charge.name, fingerprint(charge), FIGURES, who="loadtest")
    set_rollout(runtime, charge.name, "50%", who="test")
    handles = charge.enqueue_many([((n,), {}) for n in range(200)])
    went_async = [h for h in handles if not isinstance(h, InlineHandle)]
    assert 50 <= len(went_async) <= 150, len(went_async)
    assert queued(runtime.settings, charge.name) == len(went_async)
    assert [h.result() for h in handles if isinstance(h, InlineHandle)] == [
        n * 10 for n, h in enumerate(handles) if isinstance(h, InlineHandle)
    ]
