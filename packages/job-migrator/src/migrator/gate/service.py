"""One call per ``migrator gate`` and ``migrator rollout`` command: a request in, an outcome out.

Each opens the target's runtime (:func:`~migrator.gate.app.opened`), does its one
thing through :mod:`~migrator.gate.certification` or :mod:`~migrator.gate.rollouts`,
and closes it; the commands render what comes back (:mod:`migrator.render.gate`,
:mod:`migrator.render.rollout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from migrator.gate.app import QueueTarget, load_app, opened
from migrator.gate.certification import GateRow, certify_job, gate_status, revoke_job
from migrator.gate.rollouts import (
    StatusRow,
    history,
    known_jobs,
    rollout_status,
    set_job_rollout,
    unset_job_rollout,
)
from queue_runtime.config import RolloutMode
from queue_runtime.gate import Certification, Rollout, RolloutChange


def show_gate(target: QueueTarget, app: str | None) -> list[GateRow]:
    """``gate status``: one row per job the app (when given) or the tables know."""
    with opened(target) as runtime:
        return gate_status(runtime, load_app(app, target.project) if app else {})


def certify_with_report(
    target: QueueTarget, app: str, job: str, figures: Path, who: str
) -> Certification:
    """``gate certify``: certify ``job`` at its loaded code's fingerprint with a load-test report."""
    with opened(target) as runtime:
        return certify_job(runtime, load_app(app, target.project), job, figures, who)


def revoke_certifications(target: QueueTarget, job: str) -> int:
    """``gate revoke``: how many certifications of ``job`` were revoked."""
    with opened(target) as runtime:
        return revoke_job(runtime, job)


@dataclass(frozen=True)
class RolloutRequest:
    """``rollout set JOB MODE``."""

    job: str
    mode: str  # inline | PERCENT% | async
    who: str | None = None
    app: str | None = None
    force: bool = False
    reason: str | None = None


@dataclass(frozen=True)
class RolloutSet:
    stored: Rollout
    known: bool  # the app or the inventory knows the job (else: forced, or a rollback)
    forced: bool


def set_rollout_mode(target: QueueTarget, request: RolloutRequest) -> RolloutSet:
    """``rollout set``: store the job's mode, unless refused (see :mod:`migrator.gate.rollouts`)."""
    with opened(target) as runtime:
        known = known_jobs(runtime, target.project, request.app)
        stored = set_job_rollout(
            runtime, known, request.job, request.mode, request.who, request.force, request.reason
        )
    return RolloutSet(stored, request.job in known, request.force)


@dataclass(frozen=True)
class RolloutUnset:
    removed: Rollout
    default: RolloutMode  # the configured default the job follows again


def unset_rollout_mode(target: QueueTarget, job: str, who: str | None) -> RolloutUnset:
    """``rollout unset``: remove the job's stored mode."""
    with opened(target) as runtime:
        return RolloutUnset(unset_job_rollout(runtime, job, who), runtime.settings.default_rollout)


@dataclass(frozen=True)
class RolloutOverview:
    rows: list[StatusRow]
    default: RolloutMode  # what jobs without a stored rollout follow


def rollout_overview(target: QueueTarget) -> RolloutOverview:
    """``rollout status``: every stored rollout and every job with shadow evidence."""
    with opened(target) as runtime:
        return RolloutOverview(rollout_status(runtime), runtime.settings.default_rollout)


def rollout_changes(target: QueueTarget, job: str | None, limit: int) -> list[RolloutChange]:
    """``rollout history``: the audited changes, newest first."""
    with opened(target) as runtime:
        return history(runtime, job, limit)
