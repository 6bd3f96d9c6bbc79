"""The migration page's rows: the inventory's verdicts and the gate's state, per job.

The inventory is read as plain JSON (the runtime never imports the
migrator's packages). Fields read, per entry of ``jobs``: ``qualname``,
``idempotency`` (the verdict), and to place the job in a plan phase as
``migrator plan`` does, ``fast_track`` and ``keyless_idempotency``; a
``phase`` field, when an entry has one, is shown as it is; per entry of
``sites``, ``job`` and ``pattern`` (``enqueue``: the job is already moved).
Anything else is ignored, so an inventory of a newer migrator still reads.
A registered job the inventory names by a shorter qualname (scanned from
inside the package: ``mail.send_receipt`` for ``shop.mail.send_receipt``)
takes that entry's verdict when exactly one entry ends so.

Each row says what an enqueue of the job does now and why, as the gate
decides it (``queue_runtime.gate._decide``): the rollout first (inline, a
percentage, async, stored or the configured default), then for a gated job
(non_idempotent or unsafe, or declared ``unknown`` and not yet decided ``idempotent``
by the inventory: ``gate._model.held``) the certification of its loaded code: without
one, the enqueues the rollout sends async run inline (or are refused, with
``gate_action = "raise"``). ``certified`` is ``n/a`` for a job that is not
gated, as ``migrator gate status`` says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from queue_runtime.config import GateAction, Idempotency, RolloutMode
from queue_runtime.errors import ConfigError
from queue_runtime.gate._decide import current_fingerprint
from queue_runtime.gate._model import GATED, held, level_of
from queue_runtime.gate.api import default_rollout
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


# The load-test figures that decide a certification (migrator.loadtest.report.evaluate).
DECIDING = ("enqueued", "lost", "unfinished", "dead", "duplicate_completions", "p99_ms")


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str
    phase: str
    moved: bool = False  # the inventory has an ``enqueue`` site of it: already moved


@dataclass(frozen=True, slots=True)
class MigrationRow:
    job: str
    verdict: Verdict | None  # None: not in the inventory
    certification: Certification | None  # the one for the loaded code, else the newest valid
    rollout: Rollout
    stored: bool  # False: no stored mode, the configured default applies
    current: str | None = None  # the fingerprint of the loaded code (registered jobs only)
    level: Idempotency | None = None  # the stricter of the code's declaration and the verdict
    declared: Idempotency | None = None  # what the registered job's code declares
    gate_action: GateAction = GateAction.INLINE

    @property
    def gated(self) -> bool:
        return held(self.declared, self.level)

    @property
    def fingerprint(self) -> str:
        """The loaded code's fingerprint, else the certification's ("" when neither)."""
        if self.current:
            return self.current
        return self.certification.fingerprint if self.certification else ""

    @property
    def certified(self) -> str:
        """``yes``; ``stale`` (for other code than the loaded one); ``no``; ``n/a`` (not gated)."""
        cert = self.certification
        if cert is not None:
            return "stale" if self.current not in (None, cert.fingerprint) else "yes"
        return "no" if self.gated or self.level is None else "n/a"

    @property
    def runs(self) -> tuple[str, str]:
        """What an enqueue does now, and why (as ``gate_decision`` decides it)."""
        rollout, source = self.rollout, "stored rollout" if self.stored else "default rollout"
        if rollout.mode is RolloutMode.INLINE:
            return "inline", f"{source}: inline"
        sent = "async" if rollout.mode is RolloutMode.ASYNC else f"{rollout.percent}% async"
        if self.level is None and not self.gated:
            return f"{sent} unless gated", f"{source}: {rollout.label}; its class is unknown here"
        if not self.gated:
            return sent, f"{source}: {rollout.label}; {self.level}: not gated"
        if self.certified == "yes":
            return sent, f"{source}: {rollout.label}; certified for its code"
        closed = "refused (GateClosed)" if self.gate_action is GateAction.RAISE else "inline"
        why = "certified for other code" if self.certified == "stale" else "not certified"
        return closed, f"{source}: {rollout.label}, but the gate is closed: {self.level}, {why}"


def read_inventory(path: str | None) -> dict[str, Verdict]:
    """Job qualname -> verdict and phase; {} without a path. Raises ConfigError if unreadable."""
    if not path:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"inventory {path}: cannot read it: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"inventory {path}: not JSON: {exc}") from exc
    entries = data.get("jobs", []) if isinstance(data, dict) else []
    sites = data.get("sites", []) if isinstance(data, dict) else []
    moved = {s.get("job") for s in sites if isinstance(s, dict) and s.get("pattern") == "enqueue"}
    found: dict[str, Verdict] = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("qualname"), str):
            found[entry["qualname"]] = _verdict(entry, entry["qualname"] in moved)
    return found


def _verdict(entry: dict[str, Any], moved: bool) -> Verdict:
    verdict = str(entry.get("idempotency") or "unknown")
    if isinstance(entry.get("phase"), str):
        return Verdict(verdict, entry["phase"], moved)
    return Verdict(verdict, PHASES.get(_phase_verdict(entry, verdict), "unknown"), moved)


def _matching(name: str, inventory: dict[str, Verdict]) -> Verdict | None:
    """The inventory's entry for a registered job: its name, or the one qualname it ends with."""
    if name in inventory:
        return inventory[name]
    found = [v for q, v in inventory.items() if name.endswith("." + q)]
    return found[0] if len(found) == 1 else None


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
    verdicts = {n: _matching(n, inventory) for n in current}
    shown = {q for q in inventory if q not in current and _matching_any(q, verdicts, inventory)}
    names = sorted({*inventory, *current, *stored, *certified} - shown)
    return [
        MigrationRow(
            job=name,
            verdict=verdicts.get(name) or inventory.get(name),
            certification=certified.get(name),
            rollout=stored.get(name) or default_rollout(runtime, name),
            stored=name in stored,
            current=current.get(name),
            level=_level(runtime, name, verdicts.get(name) or inventory.get(name)),
            declared=_declared(runtime, name),
            gate_action=runtime.settings.gate_action,
        )
        for name in names
    ]


def _matching_any(
    qualname: str, verdicts: dict[str, Verdict | None], inventory: dict[str, Verdict]
) -> bool:
    """Whether a registered job took this (shorter) qualname's entry: one row, not two."""
    entry = inventory[qualname]
    return any(v is entry for v in verdicts.values())


def _level(runtime: Runtime, name: str, verdict: Verdict | None) -> Idempotency | None:
    """The stricter of the code's declaration (registered jobs) and the inventory's verdict."""
    declared = _declared(runtime, name)
    found = _idempotency(verdict.verdict) if verdict else None
    if declared is Idempotency.IDEMPOTENT and found in GATED:
        config = runtime.settings.jobs.get(name)
        if config is not None and (config.override_reason or "").strip():
            return declared  # the conflict is explained: the declaration wins, as at enqueue
    return level_of(declared, found) or declared  # declared unknown, no verdict: unknown


def _declared(runtime: Runtime, name: str) -> Idempotency | None:
    """What a registered job's code declares (None: undeclared, or not registered here)."""
    return (
        runtime.registry.definition(name).idempotency if name in runtime.registry.names() else None
    )


def _idempotency(text: str) -> Idempotency | None:
    try:
        return Idempotency(text)
    except ValueError:
        return None


def known_jobs(runtime: Runtime, inventory: dict[str, Verdict]) -> set[str]:
    """The jobs whose rollout the page may switch (as ``migrator rollout set`` without --force)."""
    return {*inventory, *runtime.registry.names(), *(r.job for r in runtime.gate_store.rollouts())}


def figures_text(cert: Certification | None) -> str:
    """Every figure, ``key=value`` (what the "all figures" disclosure shows)."""
    if cert is None or not cert.figures:
        return ""
    return ", ".join(f"{k}={_short(v)}" for k, v in sorted(cert.figures.items()))


def deciding_figures(cert: Certification | None) -> list[tuple[str, str]]:
    """The few figures that decide a certification, each beside its limit when it has one."""
    figures = cert.figures if cert is not None else {}
    limits = {"dead": "max_dead", "p99_ms": "sla_p99_ms"}
    found = []
    for key in DECIDING:
        if key not in figures:
            continue
        value = _short(figures[key])
        limit = figures.get(limits.get(key, ""))
        found.append((key, f"{value} (max {_short(limit)})" if limit is not None else value))
    return found


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:39] + "…"
