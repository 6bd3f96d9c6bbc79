"""What ``migrator rollout set|unset|status|history`` do, callable from Python too.

A rollout switch must not miss: ``set`` refuses a job that neither the app
(``--app MODULE``, its registered jobs) nor the inventory
(``[tool.queue_runtime] inventory_path``, else ``.migrator/inventory.json``)
knows, unless ``force`` stages it for a job not deployed yet, or the mode is
``inline`` (the rollback) for a job with a stored rollout or certification: a
rollback is never refused for a job the runtime has a record of; ``unset``
refuses a job with no stored rollout. ``set`` to async or a percentage follows
the promotion rule (:mod:`migrator.gate.promotion`: clean shadow evidence, or
``force``, audited). Every change is audited in the
runtime's ``rollout_changes`` table (who, when, from what to what, why).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from inventory.models import Inventory
from migrator.errors import GateError, UnknownRolloutJob
from migrator.gate.app import load_app
from migrator.gate.promotion import Promotion, check_promotion, forced_by, promotions
from migrator.plan.service import INVENTORY_FILE
from queue_runtime.errors import QueueError
from queue_runtime.gate import (
    ChangeCause,
    Rollout,
    RolloutChange,
    RolloutMode,
    certifications,
    parse_rollout,
    rollout_history,
    rollouts,
    set_rollout,
    unset_rollout,
)
from queue_runtime.gate.api import default_rollout
from queue_runtime.runtime import Runtime

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KnownJobs:
    """The job names the app registers and the inventory lists (where each came from)."""

    app: str | None
    registered: frozenset[str]
    inventory: Path | None
    scanned: frozenset[str]

    def __contains__(self, job: object) -> bool:
        return job in self.registered or job in self.scanned

    def refusal(self, job: str) -> str:
        """Why ``job`` is refused, in one line."""
        if self.app is None and self.inventory is None:
            return (
                f"cannot tell whether {job} is a job: pass --app MODULE (its registered jobs) "
                "or run `migrator scan` (the inventory), or --force to stage it anyway"
            )
        where = [f"--app {self.app}"] if self.app else []
        if self.inventory is not None:
            where.append(f"the inventory {self.inventory}")
        sources = " nor of ".join(where)
        close = difflib.get_close_matches(job, sorted(self.registered | self.scanned), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return (
            f"{job} is not a job of {sources}{hint}; "
            "pass --force to stage a rollout for a job not deployed yet"
        )


def known_jobs(runtime: Runtime, project: Path, app: str | None) -> KnownJobs:
    """The jobs of ``--app`` (imported) and of the project's inventory, when there is one."""
    registered = frozenset(load_app(app, project, runtime.settings)) if app else frozenset()
    path = _inventory_file(runtime, project)
    return KnownJobs(app, registered, path, _inventory_jobs(path))


def _inventory_file(runtime: Runtime, project: Path) -> Path | None:
    configured = runtime.settings.inventory_path
    path = Path(configured) if configured else INVENTORY_FILE
    path = path if path.is_absolute() else project / path
    return path if path.is_file() else None


def _inventory_jobs(path: Path | None) -> frozenset[str]:
    if path is None:
        return frozenset()
    try:
        inventory = Inventory.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise GateError(f"cannot read the inventory {path}: {exc}") from exc
    return frozenset(job.qualname for job in inventory.jobs)


def set_job_rollout(
    runtime: Runtime,
    known: KnownJobs,
    job: str,
    value: str,
    who: str | None,
    force: bool,
    reason: str | None = None,
) -> Rollout:
    """Store ``job``'s mode (``inline``, ``25%``, ``async``) unless ``job`` is unknown, or the
    promotion rule refuses it (:mod:`migrator.gate.promotion`; ``force`` passes, audited).

    ``inline`` is the rollback: never refused for a job with a stored rollout or
    certification, whatever the inventory or the app says today.
    """
    mode, _ = _tables(lambda: parse_rollout(value))  # a bad mode is reported before an unknown job
    if not force and job not in known and not _rollback(runtime, job, mode):
        raise UnknownRolloutJob(known.refusal(job))
    promoted = check_promotion(runtime, job, mode, job in known.registered, force)
    forced = promoted is not None and promoted.refusal is not None
    note = reason if promoted is None else promoted.audit(reason)
    who = forced_by(who) if forced else who
    return _tables(lambda: set_rollout(runtime, job, value, who=who, reason=note))


def _rollback(runtime: Runtime, job: str, mode: RolloutMode) -> bool:
    """``inline`` for a job the runtime has a record of (a stored rollout, a certification)."""
    if mode is not RolloutMode.INLINE:
        return False
    stored = any(r.job == job for r in _tables(lambda: rollouts(runtime)))
    return stored or bool(_tables(lambda: certifications(runtime, job)))


def unset_job_rollout(runtime: Runtime, job: str, who: str | None) -> Rollout:
    """Remove ``job``'s stored mode (it follows the default again); the removed one."""
    removed = _tables(lambda: unset_rollout(runtime, job, who))
    if removed is None:
        stored = ", ".join(r.job for r in _tables(lambda: rollouts(runtime))) or "none"
        raise UnknownRolloutJob(f"{job} has no stored rollout, nothing to unset (stored: {stored})")
    return removed


@dataclass(frozen=True, slots=True)
class StatusRow:
    """A rollout (stored, or the default for a job with shadow evidence), its last audited
    change and what the promotion rule says of its shadow evidence."""

    rollout: Rollout
    latest: RolloutChange | None
    promotion: Promotion | None = None

    @property
    def note(self) -> str:
        latest = self.latest
        if latest is None:
            return ""
        if latest.cause is ChangeCause.SLO:
            return f"SLO rollback: {latest.reason}"
        return latest.reason or ""


def rollout_status(runtime: Runtime) -> list[StatusRow]:
    """Every stored rollout, and every job with shadow evidence, with that evidence."""
    stored = {r.job: r for r in _tables(lambda: rollouts(runtime))}
    found = promotions(runtime, list(stored))
    return [
        StatusRow(
            stored.get(job) or default_rollout(runtime, job), _latest(runtime, job), found[job]
        )
        for job in found
    ]


def _latest(runtime: Runtime, job: str) -> RolloutChange | None:
    found = _tables(lambda: rollout_history(runtime, job, limit=1))
    return found[0] if found else None


def history(runtime: Runtime, job: str | None, limit: int) -> list[RolloutChange]:
    return _tables(lambda: rollout_history(runtime, job, limit))


def _tables(call: Callable[[], T]) -> T:
    """Run one call on the runtime's tables; its errors are the rollout command's to report."""
    try:
        return call()
    except QueueError as exc:
        raise GateError(str(exc)) from exc
