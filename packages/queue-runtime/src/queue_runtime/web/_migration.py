"""The migration page's rows: the inventory's verdicts and the gate's state, per job.

The inventory is read as plain JSON (the runtime never imports the
migrator's packages). Fields read, per entry of ``jobs``: ``qualname``,
``idempotency`` (the verdict), and to place the job in a plan phase as
``migrator plan`` does, ``fast_track`` and ``keyless_idempotency``; a
``phase`` field, when an entry has one, is shown as it is. Anything else is
ignored, so an inventory of a newer migrator still reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from queue_runtime.errors import ConfigError
from queue_runtime.gate.api import default_rollout
from queue_runtime.gate.decide import current_fingerprint
from queue_runtime.runtime import Runtime
from queue_runtime.store import Certification, Rollout

# Verdict -> the phase of MIGRATION_PLAN.md (migrator.plan.build.phase_of).
PHASES = {
    "idempotent": "phase 1",
    "needs_key": "phase 2",
    "non_idempotent": "phase 3",
    "unsafe": "phase 4",
    "unknown": "unknown",
}
ROLLOUT_CHOICES = ("inline", "1%", "5%", "10%", "25%", "50%", "75%", "async")


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str
    phase: str


@dataclass(frozen=True, slots=True)
class MigrationRow:
    job: str
    verdict: Verdict | None  # None: not in the inventory
    certification: Certification | None  # the one for the loaded code, else the newest valid
    rollout: Rollout
    stored: bool  # False: no stored mode, the configured default applies
    current: str | None = None  # the fingerprint of the loaded code (registered jobs only)

    @property
    def certified(self) -> str:
        """``yes``; ``stale`` (certified, but for other code than the loaded one); ``no``."""
        cert = self.certification
        if cert is None:
            return "no"
        return "stale" if self.current not in (None, cert.fingerprint) else "yes"


def read_inventory(path: str | None) -> dict[str, Verdict]:
    """Job qualname -> verdict and phase; {} without a path. Raises ConfigError if unreadable."""
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"inventory {path}: cannot read it as JSON: {exc}") from exc
    entries = data.get("jobs", []) if isinstance(data, dict) else []
    found: dict[str, Verdict] = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("qualname"), str):
            found[entry["qualname"]] = _verdict(entry)
    return found


def _verdict(entry: dict[str, Any]) -> Verdict:
    verdict = str(entry.get("idempotency") or "unknown")
    if isinstance(entry.get("phase"), str):
        return Verdict(verdict, entry["phase"])
    return Verdict(verdict, PHASES.get(_phase_verdict(entry, verdict), "unknown"))


def _phase_verdict(entry: dict[str, Any], verdict: str) -> str:
    """The verdict that places the job, as ``migrator plan`` does."""
    if entry.get("fast_track") and verdict in ("non_idempotent", "needs_key"):
        return "needs_key"
    keyless = entry.get("keyless_idempotency")
    if verdict == "needs_key" and keyless in ("non_idempotent", "unknown"):
        return str(keyless)
    return verdict


def migration_rows(runtime: Runtime, inventory: dict[str, Verdict]) -> list[MigrationRow]:
    """Every job of the inventory, the registry, the stored rollouts and certifications."""
    stored = {r.job: r for r in runtime.gate_store.rollouts()}
    current = {
        n: current_fingerprint(runtime.registry.definition(n)) for n in runtime.registry.names()
    }
    certified: dict[str, Certification] = {}
    for cert in runtime.gate_store.certifications(None, None, valid_only=True):
        if cert.job not in certified or cert.fingerprint == current.get(cert.job):
            certified[cert.job] = cert  # newest first; the loaded code's wins
    names = sorted({*inventory, *current, *stored, *certified})
    return [
        MigrationRow(
            job=name,
            verdict=inventory.get(name),
            certification=certified.get(name),
            rollout=stored.get(name) or default_rollout(runtime, name),
            stored=name in stored,
            current=current.get(name),
        )
        for name in names
    ]


def known_jobs(runtime: Runtime, inventory: dict[str, Verdict]) -> set[str]:
    """The jobs whose rollout the page may switch (as ``migrator rollout set`` without --force)."""
    return {*inventory, *runtime.registry.names(), *(r.job for r in runtime.gate_store.rollouts())}


def figures_text(cert: Certification | None) -> str:
    if cert is None or not cert.figures:
        return ""
    return ", ".join(f"{k}={_short(v)}" for k, v in sorted(cert.figures.items()))


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:39] + "…"
