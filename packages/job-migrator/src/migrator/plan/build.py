"""Inventory -> :class:`Plan`: which job goes in which phase, in which order, with which steps.

Pure: no I/O. Live items start unticked ("not checked yet"); :func:`check`
decides them, and :func:`merge_previous` carries the last known state over
from the previous ``MIGRATION_PLAN.md`` when a run does not check.
"""

from __future__ import annotations

from pathlib import Path

from codemods import api as codemods_api
from inventory.models import (
    CallSite,
    Confidence,
    Idempotency,
    Inventory,
    Job,
    files_changed_note,
)
from migrator.plan.config import PlanConfig
from migrator.plan.keys import SAME_ARGUMENTS, KeySource, key_source, resolve_key
from migrator.plan.model import (
    SIGNOFF_BLANK,
    ItemState,
    JobGroup,
    Phase,
    PhaseId,
    Plan,
    PlanItem,
    Verification,
)

__all__ = ["build_plan", "key_source", "phase_of", "prerequisites", "risk"]

NOT_CHECKED = "not checked yet: run `migrator plan --check`"
CHAOS = "kill-workers,redis-restart,pg-terminate"

_CONFIDENCE_RANK = {Confidence.HIGH: 0, Confidence.MEDIUM: 1, Confidence.LOW: 2}
_PHASE_OF = {
    Idempotency.IDEMPOTENT: PhaseId.IDEMPOTENT,
    Idempotency.NEEDS_KEY: PhaseId.NEEDS_KEY,
    Idempotency.NON_IDEMPOTENT: PhaseId.NON_IDEMPOTENT,
    Idempotency.UNSAFE: PhaseId.UNSAFE,
    Idempotency.UNKNOWN: PhaseId.UNKNOWN,
}

PHASES: dict[PhaseId, tuple[str, str]] = {
    PhaseId.PREREQUISITES: (
        "Phase 0: prerequisites",
        "Build these before moving any job: leasing, retries, the dead-letter queue, "
        "monitoring, runbooks, pools. `migrator plan --check` verifies them against the "
        "live PostgreSQL and Redis.",
    ),
    PhaseId.IDEMPOTENT: (
        "Phase 1: idempotent jobs",
        "Running twice is harmless: move these first, least risky first (fewest sites, "
        "high confidence, no result used). Each item is one `migrator apply` run: review "
        "the diff, then `--write` or `--branch`.",
    ),
    PhaseId.NEEDS_KEY: (
        "Phase 2: jobs that need an idempotency key",
        "Safe once every enqueue carries a key derived from the job's inputs: declare the "
        "key first, then apply.",
    ),
    PhaseId.NON_IDEMPOTENT: (
        "Phase 3: non-idempotent jobs",
        "A retry repeats their effect. Make them idempotent (a key and the execution "
        "guard), certify them with a load test, then roll out by percentage. Until then "
        "they run in-process, as today.",
    ),
    PhaseId.UNSAFE: (
        "Phase 4: unsafe jobs (money, account state)",
        "As phase 3, plus a named human sign-off written in this file before any rollout. "
        "Never moved until verified and load-tested.",
    ),
    PhaseId.UNKNOWN: (
        "Unknown: no verdict yet",
        "The scanner could not decide. What is missing is listed per job; once reviewed, "
        'pin a verdict with its reason in `[tool.migrator.jobs."<job>"]` and scan again. '
        "To move the code first, `migrator apply --job <job>` moves it held: the gate runs "
        "it inline, as now, until its verdict is decided or a load test certifies it.",
    ),
}


def build_plan(inventory: Inventory, config: PlanConfig | None = None) -> Plan:
    """The phased checklist for ``inventory``; ``config`` holds declared keys and links."""
    config = config or PlanConfig()
    root = Path(inventory.root) if Path(inventory.root).is_dir() else None
    phases = {pid: Phase(id=pid, title=t, intro=i) for pid, (t, i) in PHASES.items()}
    phases[PhaseId.PREREQUISITES].items = prerequisites()
    for job in sorted(inventory.jobs, key=lambda j: risk(j, inventory.sites_of(j.qualname))):
        sites = inventory.sites_of(job.qualname)
        phase = phases[phase_of(job)]
        if job.idempotency is Idempotency.IDEMPOTENT:
            phase.items.append(_move_item(job, sites))
        elif job.idempotency is Idempotency.UNKNOWN:
            phase.items.append(_verdict_item(job, sites))
        else:
            phase.groups.append(_group(job, sites, config, root))
    known = {j.qualname for j in inventory.jobs}
    for site in inventory.sites:
        if site.job not in known:
            phases[PhaseId.UNKNOWN].items.append(_unresolved_item(site))
    return Plan(
        root=inventory.root,
        inventory_summary=f"{len(inventory.jobs)} jobs, {len(inventory.sites)} call sites",
        phases=list(phases.values()),
    )


def phase_of(job: Job) -> PhaseId:
    """The phase a job belongs to.

    A job on the notification fast track (only mail, SMS or push repeat on a
    retry) goes to phase 2, right after the idempotent jobs, key declared or
    not. A job that is ``needs_key`` only because a key was declared for it
    while its effects are non-idempotent stays in phase 3: the key alone does
    not make it safe until the guard and a load test prove it.
    """
    if job.fast_track and job.idempotency in (Idempotency.NON_IDEMPOTENT, Idempotency.NEEDS_KEY):
        return PhaseId.NEEDS_KEY
    if _keyed_over(job) is not None:
        return _PHASE_OF[job.keyless_idempotency or job.idempotency]
    return _PHASE_OF[job.idempotency]


def _keyed_over(job: Job) -> Idempotency | None:
    """The non-idempotent (or unknown) verdict a declared key stands over, if any."""
    if job.idempotency is not Idempotency.NEEDS_KEY:
        return None
    if job.keyless_idempotency in (Idempotency.NON_IDEMPOTENT, Idempotency.UNKNOWN):
        return job.keyless_idempotency
    return None


def risk(job: Job, sites: list[CallSite]) -> tuple[int, int, bool, str]:
    """Least risky first: fewest sites, then higher confidence, then no result used."""
    return (
        len(sites),
        _CONFIDENCE_RANK[job.confidence],
        any(s.result_used for s in sites),
        job.qualname,
    )


def prerequisites() -> list[PlanItem]:
    def live(item_id: str, title: str, command: str) -> PlanItem:
        return PlanItem(
            id=f"prereq/{item_id}",
            title=title,
            verification=Verification.LIVE,
            evidence=NOT_CHECKED,
            command=command,
        )

    return [
        live(
            "schema",
            "Runtime schema migrated to the alembic head of queue_runtime",
            "queue-runtime migrate",
        ),
        live(
            "leases",
            "Leasing on: a lease acquire / alive / release round trip through Redis works",
            '[tool.queue_runtime] redis_url = "redis://HOST:6379/0"',
        ),
        live(
            "retry",
            "Retry policy configured: more than one attempt, exponential backoff with jitter",
            "[tool.queue_runtime.retry] max_attempts = 5",
        ),
        live(
            "dlq",
            "Dead-letter queue in place (job_history with its dead-letter index)",
            "queue-runtime migrate",
        ),
        live(
            "metrics",
            "Metrics exposed: the configured endpoint answers with queue_depth",
            '[tool.migrator.plan] metrics_url = "http://HOST:9108/metrics"',
        ),
        live(
            "runbooks",
            "Runbooks in place: docs/runbooks/*.md, or linked in [tool.migrator.plan] runbooks",
            '[tool.migrator.plan] runbooks = ["https://..."]',
        ),
        live(
            "pools",
            "Pools configured for every job that will move (phases 1 and 2)",
            '[tool.queue_runtime] default_pool = "batch"',
        ),
    ]


def _site_line(site: CallSite) -> str:
    where = f"`{site.location.path}:{site.location.line}` {site.pattern.value}"
    if site.enclosing_function:
        where += f" in `{site.enclosing_function}`"
    if site.handler:
        where += f" ({site.handler.value} handler)"
    if site.result_used:
        lines = ", ".join(map(str, site.result_use_lines)) or "?"
        where += f"; result used (lines {lines}): apply leaves it for a manual rewrite"
    return "site " + where


def _why(job: Job) -> str:
    reason = job.evidence[-1].message if job.evidence else "no evidence recorded"
    pinned = " (pinned)" if job.pinned else ""
    return f"why: {reason}{pinned}"


def _summary(job: Job, sites: list[CallSite]) -> str:
    count = f"{len(sites)} site" + ("" if len(sites) == 1 else "s")
    return f"{job.idempotency.value}, {job.confidence.value} confidence, {count}"


def _move_item(job: Job, sites: list[CallSite]) -> PlanItem:
    return PlanItem(
        id=f"{job.qualname}/apply",
        title=f"Move `{job.qualname}` onto the queue ({_summary(job, sites)})",
        verification=Verification.MANUAL,
        job=job.qualname,
        command=f"migrator apply --job {job.qualname}",
        details=[*(_site_line(s) for s in sites), _why(job), *_warnings(job)],
    )


def _warnings(job: Job) -> list[str]:
    found = files_changed_note(job)
    return [found] if found else []


def _group(job: Job, sites: list[CallSite], config: PlanConfig, root: Path | None) -> JobGroup:
    if sites and all(codemods_api.drop_in(s) is not None for s in sites):
        return _delivery_group(job, sites)
    found = resolve_key(job, config.keys.get(job.qualname), root, sites)
    key = _key_item(job, found, declared=job.qualname in config.keys)
    group = JobGroup(
        job=job.qualname,
        header=f"`{job.qualname}`: {_summary(job, sites)}",
        details=[f"- {d}" for d in (*(_site_line(s) for s in sites), _why(job), *_warnings(job))],
        items=[key],
    )
    command = f"migrator apply --job {job.qualname}"
    if found.template is not None and job.qualname not in config.keys:
        command += f" --key {job.qualname}={found.template}"
    group.fast_track = job.fast_track
    if found.template is not None and "{*}" in found.template:
        group.details.append(f"- {SAME_ARGUMENTS}")
    gated = not (job.idempotency is Idempotency.NEEDS_KEY and _keyed_over(job) is None)
    apply = PlanItem(
        id=f"{job.qualname}/apply",
        title=(
            f"Move `{job.qualname}` onto the queue with its key and the execution guard "
            "(the gate keeps it inline until certified)"
            if gated
            else f"Move `{job.qualname}` onto the queue with its key"
        ),
        verification=Verification.MANUAL,
        job=job.qualname,
        command=command,
        key=found.template if found.problem is None else None,
    )
    if job.fast_track:
        group.details.append(
            "- notification fast track: only mail, SMS or push repeat on a retry; a duplicate is "
            "visible but harmless, so it moves right after the idempotent jobs"
        )
    if not gated:
        group.items.append(apply)
        return group
    group.items += _gated_steps(job, apply)
    return group


def _delivery_details(job: Job, sites: list[CallSite], deliver: str) -> list[str]:
    return [
        f"- {d}"
        for d in (
            *(_site_line(s) for s in sites),
            _why(job),
            "Django mail: the message stays built in the request; its delivery moves to "
            f"the runtime's own job `{deliver}`, one job per send with its Message-ID given "
            "in the request (no key to declare; the job itself stays in the request)",
        )
    ]


def _delivery_group(job: Job, sites: list[CallSite]) -> JobGroup:
    """A job whose only sites are Django's own mail calls: what moves is their delivery.

    The job itself stays in the request (its arguments, a request or a model, need
    not be stored): each message is built there as before and handed to the runtime's
    own delivery job (one job per send, its Message-ID given there), so there is no key
    to declare. The load test and the rollout are that job's (``codemods._mail``).
    """
    deliver = codemods_api.DELIVERY_JOB
    group = JobGroup(
        job=job.qualname,
        header=f"`{job.qualname}`: {_summary(job, sites)}",
        details=_delivery_details(job, sites, deliver),
        fast_track=job.fast_track,
    )

    def live(step: str, title: str, command: str) -> PlanItem:
        # Checked by --check against the delivery job's certification and rollout.
        return PlanItem(
            id=f"{job.qualname}/{step}",
            title=title,
            verification=Verification.LIVE,
            job=deliver,
            evidence=NOT_CHECKED,
            command=command,
        )

    group.items = [
        PlanItem(
            id=f"{job.qualname}/apply",
            title=(
                f"Deliver the Django mail of `{job.qualname}` from a worker "
                "(the gate keeps it inline until certified)"
            ),
            verification=Verification.MANUAL,
            job=job.qualname,
            command=f"migrator apply --job {job.qualname}",
        ),
        live(
            "loadtest",
            f"Certify `{deliver}` with a load test (with chaos) for its current code",
            f"migrator loadtest {deliver} --sandbox SETTINGS --args MODULE:MESSAGES "
            f"--rate R --duration D --chaos {CHAOS}",
        ),
        live(
            "rollout",
            f"Roll `{deliver}` out by percentage: inline, then 25%, then async "
            "(inline again is the rollback)",
            f"migrator rollout set {deliver} 25%",
        ),
    ]
    return group


def _key_item(job: Job, found: KeySource, declared: bool) -> PlanItem:
    """Declare the key: ticked once declared, unless the declared key does not fit the job."""
    template, needs = found.template, job.idempotency is Idempotency.NEEDS_KEY
    if found.problem is not None:
        title, evidence = f"Fix the idempotency key `{template}`", found.problem
    elif template is None:
        title, evidence = (
            f"Give `{job.qualname}` an input that names one unit of work",
            found.source,
        )
    else:
        title = (
            f"Declare the idempotency key `{template}`"
            if needs
            else f"Make it idempotent: give it an idempotency key, e.g. `{template}`"
        )
        evidence = (
            f'declared in [tool.migrator.jobs."{job.qualname}"]'
            if declared
            else f"not declared yet; derive it from {found.source}"
        )
    return PlanItem(
        id=f"{job.qualname}/key",
        title=title,
        state=ItemState.TICKED if declared and found.problem is None else ItemState.UNTICKED,
        verification=Verification.CONFIG,
        job=job.qualname,
        evidence=evidence,
        command=None
        if template is None
        else f'[tool.migrator.jobs."{job.qualname}"] key = "{template}"',
    )


def _gated_steps(job: Job, apply: PlanItem) -> list[PlanItem]:
    def gate(step: str, title: str, command: str | None) -> PlanItem:
        # Checked by --check against the gate's tables (certifications, rollouts, job_keys).
        return PlanItem(
            id=f"{job.qualname}/{step}",
            title=title,
            verification=Verification.LIVE,
            job=job.qualname,
            evidence=NOT_CHECKED,
            command=command,
        )

    unsafe = job.idempotency is Idempotency.UNSAFE
    steps = [] if unsafe else [apply]
    steps += [
        gate(
            "guard",
            "Run it behind the execution guard: a completed key returns its stored result",
            None,
        ),
        gate(
            "loadtest",
            "Certify it with a load test (with chaos) for its current code",
            f"migrator loadtest {job.qualname} --sandbox SETTINGS --rate R --duration D "
            f"--chaos {CHAOS}",
        ),
    ]
    if unsafe:
        # Signed before the move: `migrator apply --job` refuses an unsafe job without it.
        steps[:0] = [
            PlanItem(
                id=f"{job.qualname}/signoff",
                title=SIGNOFF_BLANK,
                verification=Verification.SIGNOFF,
                job=job.qualname,
                evidence="a named human reviewed the key and the move; "
                "`migrator apply --job` refuses this job until this line is signed",
            ),
            apply,
        ]
    steps.append(
        gate(
            "rollout",
            "Roll out by percentage: inline, then 25%, then async (inline again is the rollback)",
            f"migrator rollout set {job.qualname} 25%",
        )
    )
    return steps


def _verdict_item(job: Job, sites: list[CallSite]) -> PlanItem:
    missing = [e.message for e in job.evidence] or ["no effect could be traced"]
    return PlanItem(
        id=f"{job.qualname}/verdict",
        title=f"Get a verdict for `{job.qualname}` ({_summary(job, sites)})",
        verification=Verification.MANUAL,
        job=job.qualname,
        command=f'[tool.migrator.jobs."{job.qualname}"] idempotency = "...", reason = "..."',
        details=[*(_site_line(s) for s in sites), *(f"missing: {m}" for m in missing)],
    )


def _unresolved_item(site: CallSite) -> PlanItem:
    ident = site.fingerprint or f"{site.location.path}-{site.location.line}"
    target = site.target_source or "?"
    return PlanItem(
        id=f"site/{ident}",
        title=(
            f"Resolve the job started at `{site.location.path}:{site.location.line}` "
            f"({site.pattern.value}, target `{target}`)"
        ),
        verification=Verification.MANUAL,
        details=[f"missing: {site.unresolved_reason or 'the target is only known at run time'}"],
    )
