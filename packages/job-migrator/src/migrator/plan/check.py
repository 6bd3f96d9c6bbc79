"""``migrator plan --check``: verify the prerequisites against the live servers.

Read-only, through queue_runtime's public pieces and catalog queries:

- schema: ``alembic_version`` of the configured schema equals the head of
  queue_runtime's migrations (a read-only SQL query);
- DLQ: ``job_history`` and its dead-letter index exist (and how many are dead);
- leases: a real acquire / alive / release round trip of a throwaway token
  through the runtime's lease store (:func:`queue_runtime.tools.lease_round_trip`),
  with the configured prefix (the key lives at most a few seconds), on the Redis the
  project configures; none configured is unticked (the built-in default URL
  is this machine's Redis, whatever it is);
- retry: the effective :class:`queue_runtime.RetryPolicy` retries at all;
- metrics: HTTP GET of ``[tool.migrator.plan] metrics_url`` answers with ``queue_depth``;
- runbooks: ``docs/runbooks/*.md`` in the scanned root, or links configured;
- pools: every job of phases 1 and 2 maps to a pool defined for the runtime,
  through ``[tool.queue_runtime.jobs."<job>"] pool`` or an explicit ``default_pool``.

The gated jobs' steps (phases 3 and 4, and fast-tracked ones), against the
gate's tables in the same schema:

- ``<job>/guard``: ``job_keys`` holds keys of the job completed through the
  execution guard (it really runs keyed, behind the guard);
- ``<job>/loadtest``: a valid certification for the job's *current* code: the
  job's module is imported from the scanned root and fingerprinted with
  :func:`queue_runtime.gate.fingerprint`; a certification of older code does
  not count;
- ``<job>/rollout``: the stored rollout mode is ``async`` (or no row and the
  configured default is async) and the job is certified for its current code,
  so enqueues really go async. Its evidence also shows the job's shadow
  evidence (``shadow_evidence``, of its current code) and whether the promotion
  rule would let ``migrator rollout set`` move it async.

Each check turns its failure into evidence, never an exception.
"""

from __future__ import annotations

import importlib
import secrets
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from migrator.plan.config import CheckSettings
from migrator.plan.model import ItemState, Plan, Verification
from queue_runtime.config import RolloutMode
from queue_runtime.gate import fingerprint
from queue_runtime.shadow_model import current_evidence, evidence_note
from queue_runtime.store import Rollout
from queue_runtime.tools import ReadOnly, lease_round_trip, read_only

Outcome = tuple[bool, str]
LEASE_WORKER = "migrator-plan-check"


def check(plan: Plan, settings: CheckSettings) -> Plan:
    """``plan`` with every live item verified now (ticked or unticked, with evidence)."""
    checked = plan.model_copy(deep=True)
    now = datetime.now(UTC)
    checked.checked_at = now
    checks: dict[str, Callable[[], Outcome]] = {
        "prereq/schema": lambda: check_schema(settings),
        "prereq/dlq": lambda: check_dlq(settings),
        "prereq/leases": lambda: check_leases(settings),
        "prereq/retry": lambda: check_retry(settings),
        "prereq/metrics": lambda: check_metrics(settings),
        "prereq/runbooks": lambda: check_runbooks(settings),
        "prereq/pools": lambda: check_pools(settings, plan.moving_jobs()),
    }
    gate = GateChecks(settings)
    stamp = now.strftime("%Y-%m-%d %H:%M UTC")
    for item in checked.items():
        if item.verification is not Verification.LIVE:
            continue
        run = checks.get(item.id) or gate.check_for(item.id, item.job)
        if run is None:
            continue
        try:
            ok, evidence = run()
        except Exception as exc:  # a check that breaks is a failed check, with the reason
            ok, evidence = False, f"{type(exc).__name__}: {exc}"
        item.state = ItemState.TICKED if ok else ItemState.UNTICKED
        item.evidence = f"checked {stamp}: {evidence}"
        item.verified = True
    return checked


# -- PostgreSQL ------------------------------------------------------------------
def alembic_heads() -> list[str]:
    """The head revision(s) of the migrations shipped with queue_runtime."""
    from alembic.script import ScriptDirectory

    import queue_runtime.migrations as migrations

    return list(ScriptDirectory(str(Path(migrations.__file__).parent)).get_heads())


def _stores(settings: CheckSettings) -> ReadOnly:
    """The runtime's gate store and inspector, on read-only connections with the check's timeout."""
    return read_only(settings.runtime, settings.timeout)


_NO_DATABASE = (
    "no database URL: set [tool.queue_runtime] database_url, QUEUE_RUNTIME_DATABASE_URL "
    "or --database-url"
)


def check_schema(settings: CheckSettings) -> Outcome:
    if not settings.runtime.database_url:
        return False, _NO_DATABASE
    schema = settings.runtime.schema_name
    heads = alembic_heads()
    versions = _stores(settings).inspector.revisions()
    if versions is None:
        return False, f"schema `{schema}` is not migrated (no alembic_version table)"
    if sorted(versions) == sorted(heads):
        return True, f"schema `{schema}` at {', '.join(versions)}, the alembic head"
    return False, (
        f"schema `{schema}` at {', '.join(versions) or 'no revision'}, head is {', '.join(heads)}"
    )


def check_dlq(settings: CheckSettings) -> Outcome:
    if not settings.runtime.database_url:
        return False, _NO_DATABASE
    schema = settings.runtime.schema_name
    inspector = _stores(settings).inspector
    missing = inspector.missing(["job_history", "job_history_dead_idx"])
    if missing:
        return False, f"missing in schema `{schema}`: {', '.join(missing)}"
    dead = inspector.dead_count()
    return True, f"`{schema}.job_history` with its dead-letter index; {dead} dead job(s) now"


# -- Redis -----------------------------------------------------------------------
_NO_REDIS = (
    "no Redis configured (the runtime's built-in redis://127.0.0.1:6379/0 is whatever runs on "
    "this machine, not the project's): set [tool.queue_runtime] redis_url, "
    "QUEUE_RUNTIME_REDIS_URL or --redis-url"
)


def check_leases(settings: CheckSettings) -> Outcome:
    url, prefix = settings.runtime.redis_url, settings.runtime.redis_prefix
    # Only a URL the project names counts: model_fields_set holds what the table, the
    # environment or a flag gave, never the built-in default.
    if not url or "redis_url" not in settings.runtime.model_fields_set:
        return False, _NO_REDIS
    token = f"plan-check-{secrets.token_hex(8)}"
    trip = lease_round_trip(settings.runtime, token, LEASE_WORKER, ttl=settings.timeout)
    if trip.ok:
        return True, f"acquire / alive / release round trip under prefix `{prefix}`"
    return False, (
        f"lease round trip under prefix `{prefix}` went wrong: acquired {trip.acquired}, "
        f"alive {trip.alive}, alive after release {trip.after_release}"
    )


# -- configuration, files, HTTP ----------------------------------------------------
def check_retry(settings: CheckSettings) -> Outcome:
    policy = settings.runtime.retry
    origin = "configured" if "retry" in settings.runtime_table else "the built-in default"
    text = (
        f"max_attempts {policy.max_attempts}, backoff {policy.base_delay:g} s up to "
        f"{policy.max_delay:g} s with full jitter, then the DLQ ({origin})"
    )
    single = [
        name
        for name, job in settings.runtime.jobs.items()
        if job.retry is not None and job.retry.max_attempts < 2
    ]
    if policy.max_attempts < 2:
        return False, f"{text}: a single attempt never retries"
    if single:
        return True, f"{text}; no retries for {', '.join(sorted(single))}"
    return True, text


def check_metrics(settings: CheckSettings) -> Outcome:
    url = settings.metrics_url
    if not url:
        return False, "no metrics endpoint configured: set [tool.migrator.plan] metrics_url"
    try:
        with urllib.request.urlopen(url, timeout=settings.timeout) as response:
            body = response.read(4_000_000)
            status = response.status
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"{url} did not answer: {reason}"
    if status == 200 and b"queue_depth" in body:
        return True, f"{url} answers with queue_depth"
    return False, f"{url} answered {status} without queue_depth"


def check_runbooks(settings: CheckSettings) -> Outcome:
    found = sorted(
        p.relative_to(settings.root).as_posix()
        for p in (settings.root / "docs" / "runbooks").glob("*.md")
    )
    links, broken = [], []
    for link in settings.runbooks:
        if link.startswith(("http://", "https://")) or (settings.root / link).exists():
            links.append(link)
        else:
            broken.append(link)
    if broken:
        return False, f"linked runbooks not found: {', '.join(broken)}"
    if found or links:
        return True, ", ".join([*found, *links])
    return False, "no docs/runbooks/*.md and no [tool.migrator.plan] runbooks links"


def check_pools(settings: CheckSettings, jobs: list[str]) -> Outcome:
    if not jobs:
        return True, "no job moves yet (phases 1 and 2 are empty)"
    table = settings.runtime_table
    default = table.get("default_pool")
    per_job = table.get("jobs", {}) if isinstance(table.get("jobs"), dict) else {}
    pools = settings.runtime.pools
    mapped: dict[str, str] = {}
    missing: list[str] = []
    for job in jobs:
        entry = per_job.get(job, {})
        pool = entry.get("pool") if isinstance(entry, dict) else None
        pool = pool or default
        if pool and pool in pools:
            mapped[job] = pool
        else:
            missing.append(job)
    if missing:
        return False, (
            f"no configured pool for {', '.join(missing)}: set [tool.queue_runtime] "
            'default_pool or [tool.queue_runtime.jobs."<job>"] pool'
        )
    by_pool: dict[str, int] = {}
    for pool in mapped.values():
        by_pool[pool] = by_pool.get(pool, 0) + 1
    return True, ", ".join(f"{n} job(s) -> {pool}" for pool, n in sorted(by_pool.items()))


# -- the gate: guard, certification, rollout of one job ------------------------------
GATE_TABLES = ("certifications", "rollouts", "job_keys", "shadow_evidence")


@dataclass(frozen=True, slots=True)
class _GateStores:
    """The gate's stores when its tables can be read; else None and the reason."""

    stores: ReadOnly | None
    problem: str = ""


class GateChecks:
    """The per-job gate checks; the job's current fingerprint is computed once per run."""

    def __init__(self, settings: CheckSettings) -> None:
        self.settings = settings
        self._fingerprints: dict[str, Outcome] = {}

    def check_for(self, item_id: str, job: str | None) -> Callable[[], Outcome] | None:
        if job is None:
            return None
        step = item_id.rsplit("/", 1)[-1]
        if step == "guard":
            return lambda: self.guard(job)
        if step == "loadtest":
            return lambda: self.certified(job)
        if step == "rollout":
            return lambda: self.rollout(job)
        return None

    def _stores(self) -> _GateStores:
        """The stores, or (``stores`` None) why the gate tables cannot be read."""
        if not self.settings.runtime.database_url:
            return _GateStores(None, _NO_DATABASE)
        stores = _stores(self.settings)
        missing = stores.inspector.missing(GATE_TABLES)
        if missing:
            schema = self.settings.runtime.schema_name
            return _GateStores(
                None,
                f"no gate tables in schema `{schema}` ({', '.join(missing)}): run queue-runtime migrate",
            )
        return _GateStores(stores)

    def guard(self, job: str) -> Outcome:
        gate = self._stores()
        if gate.stores is None:
            return False, gate.problem
        stores = gate.stores
        counts = stores.gate.key_counts(job)
        if counts.completed:
            return True, f"{counts.completed} keyed run(s) completed through the execution guard"
        return False, (
            f"no keyed run of `{job}` has completed through the execution guard yet"
            + (f" ({counts.total} in progress)" if counts.total else "")
        )

    def current_fingerprint(self, job: str) -> Outcome:
        """(True, fingerprint) or (False, why the job's code could not be fingerprinted)."""
        if job not in self._fingerprints:
            self._fingerprints[job] = _fingerprint_of(self.settings.root, job)
        return self._fingerprints[job]

    def certified(self, job: str) -> Outcome:
        gate = self._stores()
        if gate.stores is None:
            return False, gate.problem
        stores = gate.stores
        found = stores.gate.certifications(job, None, valid_only=True)
        if not found:
            return False, f"no valid certification of `{job}`: run `migrator loadtest`"
        ok, current = self.current_fingerprint(job)
        if not ok:
            return False, f"certified, but its current code cannot be fingerprinted: {current}"
        for cert in found:
            if cert.fingerprint == current:
                return True, (
                    f"certified by {cert.certified_by} at {cert.certified_at:%Y-%m-%d %H:%M}"
                    f" for the current code (fingerprint {cert.fingerprint[:12]})"
                )
        newest = found[0]
        return False, (
            f"certified by {newest.certified_by} for fingerprint {newest.fingerprint[:12]}, "
            f"but the code changed since (now {current[:12]}): the gate is closed until it is "
            "certified again"
        )

    def rollout(self, job: str) -> Outcome:
        gate = self._stores()
        if gate.stores is None:
            return False, gate.problem
        stores = gate.stores
        stored: Rollout | None = next((r for r in stores.gate.rollouts() if r.job == job), None)
        if stored is not None:
            mode = stored.mode
            where = f"rollout {stored.label} (set by {stored.updated_by or 'unknown'})"
        else:
            mode = self.settings.runtime.default_rollout
            where = f"no rollout stored: the default ({mode.value}) applies"
        where = f"{where}; {self.shadow(stores, job)}"
        if mode is not RolloutMode.ASYNC:
            return False, where
        ok, evidence = self.certified(job)
        if not ok:
            return False, f"{where}, but the gate keeps it inline: {evidence}"
        return True, f"{where}; {evidence}"

    def shadow(self, stores: ReadOnly, job: str) -> str:
        """The job's shadow evidence (of its current code when it can be fingerprinted)."""
        ok, current = self.current_fingerprint(job)
        found = current_evidence(stores.gate.shadow_evidence(job), job, current if ok else None)
        return evidence_note(found, job, self.settings.runtime.shadow_min_calls)


def _fingerprint_of(root: Path, qualname: str) -> Outcome:
    """Import the job's module from ``root`` and fingerprint the function."""
    folder = str(root.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    parts = qualname.split(".")
    errors: list[str] = []
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: Any = importlib.import_module(".".join(parts[:cut]))
        except Exception as exc:  # the app's import failing is evidence, not a crash
            errors.append(f"{'.'.join(parts[:cut])}: {type(exc).__name__}: {exc}")
            continue
        try:
            for name in parts[cut:]:
                target = getattr(target, name)
        except AttributeError as exc:
            errors.append(str(exc))
            continue
        return True, fingerprint(target)
    return False, f"cannot import `{qualname}` from {root}: {'; '.join(errors[:1]) or 'not found'}"
