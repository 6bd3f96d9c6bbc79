"""Certifications: each job's gate status, certifying a job with a load-test report, revoking.

The runtime and the app come from :mod:`migrator.gate.app`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from migrator.errors import GateError
from migrator.loadtest.report import LoadTestReport, evaluate
from queue_runtime.errors import QueueError
from queue_runtime.gate import (
    Certification,
    Rollout,
    certifications,
    certify,
    classification,
    current_fingerprint,
    is_gated,
    revoke,
    rollouts,
)
from queue_runtime.gate.api import default_rollout
from queue_runtime.jobs import JobFunction
from queue_runtime.runtime import Runtime

T = TypeVar("T")


@dataclass(frozen=True)
class GateRow:
    job: str
    classification: str
    gated: bool
    fingerprint: str | None  # of the loaded code; None without --app
    certified: bool  # a valid certification for the current fingerprint
    latest: Certification | None  # the newest certification (any fingerprint, maybe revoked)
    rollout: Rollout
    runs: str  # what an enqueue does now: async | inline | percent | inline (gate closed)


def gate_status(runtime: Runtime, jobs: dict[str, JobFunction[..., Any]]) -> list[GateRow]:
    """One row per job known to the app or to the tables."""
    history = _query(lambda: certifications(runtime))
    stored = {r.job: r for r in _query(lambda: rollouts(runtime))}
    names = sorted(set(jobs) | {c.job for c in history} | set(stored))
    return [_row(runtime, name, jobs.get(name), history, stored) for name in names]


def _row(
    runtime: Runtime,
    name: str,
    jf: JobFunction[..., Any] | None,
    history: list[Certification],
    stored: dict[str, Rollout],
) -> GateRow:
    mine = [c for c in history if c.job == name]
    rollout = stored.get(name) or default_rollout(runtime, name)
    fp = current_fingerprint(jf) if jf is not None else None
    certified = fp is not None and any(c.valid and c.fingerprint == fp for c in mine)
    if jf is None:
        verdict, gated = "? (not in --app)", False
    else:
        try:
            level = classification(runtime, jf)
            verdict, gated = level.value, is_gated(runtime, jf)
        except QueueError as exc:
            verdict, gated = f"conflict: {exc}", True
    runs = rollout.label
    if jf is None and rollout.label != "inline":
        runs = f"{rollout.label} unless gated (pass --app)"
    elif gated and not certified and rollout.label != "inline":
        runs = "inline (gate closed)"
    return GateRow(name, verdict, gated, fp, certified, mine[0] if mine else None, rollout, runs)


def certify_job(
    runtime: Runtime,
    jobs: dict[str, JobFunction[..., Any]],
    job: str,
    figures_file: Path,
    who: str,
) -> Certification:
    """Certify ``job`` at the fingerprint of its loaded code with a load-test report.

    The file is what ``migrator loadtest --json`` writes. Its own ``passed``
    is never believed: the verdict is computed again from its figures with the
    load test's rules (:func:`~migrator.loadtest.report.evaluate`), every field
    naming a job must name ``job``, and it must be of the current fingerprint.
    The report, as read and validated, is stored with the certification.
    Anything else is refused with a one-line reason.
    """
    if job not in jobs:
        raise GateError(f"{job} is not a job of the --app module (known: {', '.join(jobs) or '-'})")
    raw = _read_report(figures_file)
    fingerprint = current_fingerprint(jobs[job])
    report = _passing_report(figures_file, raw, job, fingerprint)
    figures = {**report.figures(), "passed": True}
    stored = report.model_dump(mode="json")
    return _query(lambda: certify(runtime, job, fingerprint, figures, who, report=stored))


def _read_report(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GateError(f"cannot read --figures {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise GateError(f"--figures {path}: expected a JSON object (a load-test report)")
    return raw


def _passing_report(path: Path, raw: dict[str, Any], job: str, fingerprint: str) -> LoadTestReport:
    """The report if it certifies ``job`` at ``fingerprint``; else GateError saying why not."""
    report = _parse_report(path, raw)
    for field, named in (("job", report.job), ("spec.job", report.spec.job)):
        if named != job:
            raise GateError(f"--figures {path} is the report of {named} ({field}), not of {job}")
    _check_verdict(path, report)
    if report.fingerprint != fingerprint:
        raise GateError(
            f"--figures {path} is stale: measured at fingerprint {str(report.fingerprint)[:12]}, "
            f"{job}'s code is now {fingerprint[:12]}: run the load test again"
        )
    return report


def _parse_report(path: Path, raw: dict[str, Any]) -> LoadTestReport:
    try:
        return LoadTestReport.model_validate(raw)
    except ValidationError as exc:
        missing = ", ".join(sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]}))
        raise GateError(
            f"--figures {path} is not a load-test report (missing or invalid: {missing}); "
            "write one with `migrator loadtest --json`"
        ) from exc


def _check_verdict(path: Path, report: LoadTestReport) -> None:
    """The load test's rules on the report's figures; its own ``passed`` may only say no."""
    passed, reasons = evaluate(report)
    if not passed:
        claim = ", although the report says it passed" if report.passed else ""
        raise GateError(
            f"--figures {path}: the load test of {report.job} does not pass on its figures"
            f" ({'; '.join(reasons)}){claim}"
        )
    if not report.passed:
        why = "; ".join(report.reasons) or "it did not pass"
        raise GateError(f"--figures {path}: the load test of {report.job} failed ({why})")


def revoke_job(runtime: Runtime, job: str) -> int:
    return _query(lambda: revoke(runtime, job))


def _query(call: Callable[[], T]) -> T:
    """Run one call on the runtime's tables; its errors are the gate command's to report."""
    try:
        return call()
    except QueueError as exc:
        raise GateError(str(exc)) from exc
