"""``run_loadtest``: the real job, the real runtime, real workers, load and chaos; a report.

1. The sandbox settings module is imported (it configures queue_runtime); the
   queue schema is migrated there and the ledger table created.
2. ``spec.workers`` worker subprocesses start (``queue-runtime worker
   migrator.loadtest._ledger_app``, one PostgreSQL application name each);
   with ``redis-restart`` chaos they use a private redis-server the load test
   starts (and may therefore restart).
3. Jobs are enqueued on the schedule (steady rate, bursts) while the chaos
   thread injects its faults; then the queue drains (``drain_timeout``).
4. The ledger and the queue's history give the figures; the rules in
   :mod:`migrator.loadtest.report` give the verdict; a pass certifies the
   job's current fingerprint through the gate.
"""

from __future__ import annotations

import contextlib
import getpass
import importlib
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from migrator.errors import MigratorError
from migrator.loadtest import ledger
from migrator.loadtest.chaos import Chaos
from migrator.loadtest.fleet import Fleet, FleetError, PrivateRedis, env_for_workers, wait_for
from migrator.loadtest.load import (
    Enqueued,
    Enqueuer,
    LoadResult,
    as_call,
    load_generator,
    signature_generator,
)
from migrator.loadtest.report import Execution, LoadTestReport, evaluate, latency_of
from migrator.loadtest.spec import ChaosKind, LoadTestSpec
from migrator.loadtest.target import EXPLICIT, CertifyTarget
from queue_runtime import Mode, QueueError, Settings, current, migrate
from queue_runtime.bootstrap import bootstrap, bootstrap_project
from queue_runtime.gate import certify
from queue_runtime.gate import fingerprint as code_fingerprint
from queue_runtime.jobs import JobFunction
from queue_runtime.runtime import Runtime
from queue_runtime.store import HistoryEntry, Inspector, JobStatus
from queue_runtime.testing import ExecutionLedger, RedisServerMissing
from queue_runtime.tools import read_only

Progress = Callable[[str], None]


class SandboxError(MigratorError):
    """The load test cannot use the sandbox."""


class LoadTestError(MigratorError):
    """The load test could not run."""


def load_sandbox(module: str, cwd: Path | None = None) -> Settings:
    """Import the sandbox settings module (it configures queue_runtime); its Settings.

    Refused unless it configures queue mode with a database: a load test never
    runs a job's effects anywhere the user did not name.
    """
    root = str(cwd or Path.cwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        # The framework first, as `queue-runtime worker` does: the sandbox and the job's
        # module may import models (Django) or need the app (Flask).
        bootstrap_project(Path(root))
        importlib.import_module(module)
        settings = current().settings
        bootstrap(settings)  # a framework the sandbox itself names
    except ImportError as exc:
        raise SandboxError(f"--sandbox {module}: cannot import it: {exc}") from exc
    except QueueError as exc:
        raise SandboxError(f"--sandbox {module}: cannot set up the app: {exc}") from exc
    if settings.effective_mode is not Mode.QUEUE or not settings.database_url:
        raise SandboxError(
            f"--sandbox {module} does not configure queue_runtime in queue mode with a"
            " database_url (call queue_runtime.configure(...) in it)"
        )
    return settings


def resolve_job(
    name: str, job_module: str | None, runtime: Runtime
) -> tuple[JobFunction[..., Any], str | None]:
    """The registered job and the module that registers it (imported here)."""
    candidates = [job_module] if job_module else _prefixes(name)
    imported = None
    for module in candidates:
        if name in runtime.registry:
            break
        try:
            importlib.import_module(module)
            imported = module
        except ImportError:
            if job_module:
                raise LoadTestError(f"cannot import the job module {job_module}") from None
    if name not in runtime.registry:
        raise LoadTestError(
            f"no job named {name!r} is registered by the sandbox or {', '.join(candidates)}"
        )
    return runtime.registry.get(name, JobFunction), imported or job_module


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]


def run_loadtest(
    spec: LoadTestSpec,
    settings: Settings | None = None,
    progress: Progress | None = None,
    cwd: Path | None = None,
    certify_into: Settings | CertifyTarget | None = None,
) -> LoadTestReport:
    """Run the load test ``spec`` describes against the sandbox; certify the job when it passes.

    The certification goes into ``certify_into`` (the app's database and schema:
    :func:`~migrator.loadtest.target.certify_target`) when given, else into the
    sandbox's schema; the output and the report's notes say which.

    Four steps, each with its typed result: :func:`_prepare` (the sandbox, the job, the
    ledger), :func:`_drive` (workers, load, chaos, drain), :func:`_collect` (the report and
    its verdict), :func:`_conclude` (certify on a pass, keep the logs on a failure).
    """
    say = progress or (lambda message: None)
    prepared = _prepare(spec, settings, cwd or Path.cwd())
    try:
        driven = _drive(prepared, say)
    finally:
        prepared.runtime.close()
    report = _collect(prepared, driven)
    _conclude(report, prepared, driven, certify_into, say)
    return report


@dataclass(frozen=True)
class _Prepared:
    """The sandbox ready to run: its settings, the job, the run's ledger."""

    spec: LoadTestSpec
    settings: Settings
    cwd: Path
    run_id: str
    runtime: Runtime
    jf: JobFunction[..., Any]
    job_module: str | None
    generate: Callable[[int], tuple[tuple[Any, ...], dict[str, Any]]]
    fingerprint: str | None
    executions: ExecutionLedger
    started_at: datetime


@dataclass(frozen=True)
class _Driven:
    """What the run produced: the load, the chaos, the ledger's rows, its scratch folder."""

    load: LoadResult
    chaos: Chaos
    rows: list[tuple[Execution, str | None]]
    notes: list[str]
    workdir: Path


def _prepare(spec: LoadTestSpec, settings: Settings | None, cwd: Path) -> _Prepared:
    sandbox_settings = load_sandbox(spec.sandbox, cwd)
    settings = settings or sandbox_settings
    runtime = Runtime(settings)
    try:
        jf, job_module = resolve_job(spec.job, spec.job_module, runtime)
        try:
            migrate(settings)
            executions = ledger.ledger_in(settings.database_url or "", settings.schema_name)
            executions.create()
        except QueueError as exc:
            raise LoadTestError(f"cannot prepare the sandbox database: {exc}") from exc
    except BaseException:
        runtime.close()
        raise
    return _Prepared(
        spec=spec,
        settings=settings,
        cwd=cwd,
        run_id=secrets.token_hex(4),
        runtime=runtime,
        jf=jf,
        job_module=job_module,
        generate=_generator(spec, jf),
        fingerprint=code_fingerprint(jf),
        executions=executions,
        started_at=datetime.now(UTC),
    )


def _drive(prepared: _Prepared, say: Progress) -> _Driven:
    spec, settings, run_id = prepared.spec, prepared.settings, prepared.run_id
    workdir = Path(tempfile.mkdtemp(prefix=f"migrator-loadtest-{run_id}-"))
    env = env_for_workers(
        {
            "MIGRATOR_LOADTEST_SANDBOX": spec.sandbox,
            "MIGRATOR_LOADTEST_JOB": spec.job,
            "MIGRATOR_LOADTEST_JOB_MODULE": prepared.job_module or "",
            "MIGRATOR_LOADTEST_RUN": run_id,
            "MIGRATOR_LOADTEST_LEDGER_DSN": settings.database_url or "",
            "MIGRATOR_LOADTEST_SCHEMA": settings.schema_name,
        },
        prepared.cwd,
    )
    redis_server: PrivateRedis | None = None
    fleet_settings = settings
    notes: list[str] = []
    try:
        if ChaosKind.REDIS_RESTART in spec.chaos:
            redis_server = PrivateRedis(workdir)
            redis_server.start()
            fleet_settings = settings.model_copy(update={"redis_url": redis_server.url})
            notes.append(f"workers used a private redis-server on port {redis_server.port}")
        fleet = Fleet(run_id, fleet_settings, env, workdir, spec.concurrency, prepared.cwd)
        try:
            say(f"run {run_id}: starting {spec.workers} worker(s) for {spec.job}")
            for _ in range(spec.workers):
                fleet.start()
            for worker in list(fleet.workers):
                fleet.wait_connected(worker)
            runtime = prepared.runtime
            enqueuer = Enqueuer(runtime, prepared.jf, spec, run_id, prepared.generate)
            chaos = Chaos(spec, fleet, redis_server, run_id, say)
            say(f"load: {spec.rate:g}/s for {spec.duration:g}s, {spec.planned_jobs()} jobs")
            began = time.monotonic()
            enqueuer.start(began)
            chaos.start(began)
            load = enqueuer.join()
            chaos.join()
            say(f"enqueued {len(load.enqueued)}; draining (up to {spec.drain_timeout:g}s)")
            _drain(_inspector(settings), [e.job_id for e in load.enqueued], spec.drain_timeout)
            rows = ledger.read(prepared.executions, run_id)
        finally:
            fleet.stop_all()
    except (FleetError, RedisServerMissing) as exc:
        raise LoadTestError(str(exc)) from exc
    finally:
        if redis_server is not None:
            redis_server.stop()
    return _Driven(load=load, chaos=chaos, rows=rows, notes=notes, workdir=workdir)


def _collect(prepared: _Prepared, driven: _Driven) -> LoadTestReport:
    """The report: the figures, what the run noticed, and the rules' verdict."""
    spec, load, chaos = prepared.spec, driven.load, driven.chaos
    report = _report(
        spec,
        prepared.run_id,
        prepared.fingerprint,
        prepared.started_at,
        load,
        driven.rows,
        prepared.settings,
    )
    report.chaos_events = chaos.events
    report.app_key, report.key_pairs = spec.app_key, load.key_pairs
    report.key_merges = load.key_merges  # pairs of different calls the app's key merged
    report.notes = driven.notes + [f"chaos {e}" for e in chaos.errors] + load.errors[:20]
    if load.behind_seconds > 1.0:
        report.notes.append(f"the enqueue loop fell {load.behind_seconds:.1f}s behind its schedule")
    report.passed, report.reasons = evaluate(report)
    return report


def _conclude(
    report: LoadTestReport,
    prepared: _Prepared,
    driven: _Driven,
    certify_into: Settings | CertifyTarget | None,
    say: Progress,
) -> None:
    """A pass certifies the job (and drops the workers' logs); a failure keeps the logs."""
    if report.passed:
        shutil.rmtree(driven.workdir, ignore_errors=True)
        _certify(report, _target(certify_into), prepared.settings, prepared.jf)
        say(report.notes[-1])
    else:
        report.notes.append(f"worker logs kept in {driven.workdir}")
    prepared.executions.delete_run(prepared.run_id)


def _generator(
    spec: LoadTestSpec, jf: JobFunction[..., Any]
) -> Callable[[int], tuple[tuple[Any, ...], dict[str, Any]]]:
    if spec.args is None:
        return signature_generator(jf)
    function = load_generator(spec.args)
    return lambda i: as_call(function(i))


def _inspector(settings: Settings) -> Inspector:
    """The runtime's inspector on connections of its own (the load's Runtime may be closed)."""
    return read_only(settings, timeout=10.0).inspector


def _drain(inspector: Inspector, ids: list[int], timeout: float) -> None:
    def drained() -> bool:
        return inspector.finished_count(ids) >= len(ids)

    with contextlib.suppress(FleetError):  # what is left is reported as unfinished
        wait_for(drained, timeout, "the queue to drain", interval=0.2)


def _throughput(succeeded: list[HistoryEntry]) -> float:
    """Jobs per second from the first enqueue to the last finish of the succeeded jobs."""
    if not succeeded:
        return 0.0
    first = min(h.enqueued_at for h in succeeded)
    span = (max(h.finished_at for h in succeeded) - first).total_seconds()
    return len(succeeded) / span if span > 0 else float(len(succeeded))


def _report(
    spec: LoadTestSpec,
    run_id: str,
    fingerprint: str | None,
    started_at: datetime,
    load: LoadResult,
    rows: list[tuple[Execution, str | None]],
    settings: Settings,
) -> LoadTestReport:
    enqueued: list[Enqueued] = load.enqueued
    ids = [e.job_id for e in enqueued if e.created]
    inspector = _inspector(settings)
    history = inspector.history(ids)
    queued = inspector.unfinished_ids(ids)
    finished = {h.id: h for h in history}
    errors = {h.id: h.errors for h in history}
    succeeded = [h for h in history if h.status is JobStatus.SUCCEEDED]
    first_start: dict[int, datetime] = {}
    for execution, _ in rows:
        first_start.setdefault(execution.job_id, execution.started_at)
    enqueued_at = {h.id: h.enqueued_at for h in history}
    latencies = [
        (first_start[i] - enqueued_at[i]).total_seconds() * 1000.0
        for i in ids
        if i in first_start and i in enqueued_at
    ]
    duplicates = ledger.duplicate_completions(rows)
    for duplicate in duplicates:
        job_ids = {e.job_id for e in duplicate.executions}
        duplicate.attempt_errors = [
            f"job {job_id} attempt {err.get('attempt')}: {err.get('error')}"
            for job_id in sorted(job_ids)
            for err in errors.get(job_id) or []
            if isinstance(err, dict)
        ]
    return LoadTestReport(
        job=spec.job,
        run_id=run_id,
        fingerprint=fingerprint,
        spec=spec,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        enqueued=len(enqueued),
        enqueue_deduplicated=sum(1 for e in enqueued if not e.created),
        succeeded=len(succeeded),
        dead=sum(1 for h in history if h.status is JobStatus.DEAD),
        unfinished=len(queued),
        lost=sum(1 for i in ids if i not in finished and i not in queued),
        throughput=round(_throughput(succeeded), 2),
        latency=latency_of(latencies),
        executions=len(rows),
        duplicate_deliveries=ledger.duplicate_deliveries(rows),
        duplicate_completions=duplicates,
        retries=sum(max(0, h.attempt - 1) for h in history),
    )


def _target(certify_into: Settings | CertifyTarget | None) -> CertifyTarget:
    if isinstance(certify_into, Settings):
        return CertifyTarget(certify_into, EXPLICIT)
    return certify_into or CertifyTarget(None, "the sandbox")


def _certify(
    report: LoadTestReport, target: CertifyTarget, sandbox: Settings, jf: JobFunction[..., Any]
) -> None:
    if report.fingerprint is None:
        report.notes.append("not certified: the job's fingerprint is unknown")
        return
    who = report.spec.certify_by or os.environ.get("USER") or getpass.getuser()
    figures = {**report.figures(), "passed": True}
    where = target.where(sandbox)
    runtime = Runtime(target.settings or sandbox)
    try:
        certify(runtime, jf.name, report.fingerprint, figures, who, report.model_dump(mode="json"))
    except QueueError as exc:
        report.notes.append(f"not certified into {where}: {exc}")
        return
    finally:
        runtime.close()
    report.certified = True
    report.certified_by = who
    report.certified_into = where
    report.notes.append(f"certified into {where}")
