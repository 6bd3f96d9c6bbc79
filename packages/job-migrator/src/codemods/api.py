"""The library functions behind ``migrator apply``: plan, write, branch.

``plan_apply`` never writes; ``write`` applies a plan; ``create_branches``
turns a plan into review branches (one commit per job) and PR texts.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from codemods import _jobdefs, _stale, _threadjob
from codemods._changes import git
from codemods._changes.branches import BranchReport, create
from codemods._changes.changeset import plan_changes, read_source, write_changes
from codemods._config import check_keys, effective_options
from codemods._edits import status_endpoint
from codemods._edits.register import decorator_arguments, task_arguments
from codemods._edits.status_endpoint import AppModule
from codemods._mail import DELIVERY_JOB as DELIVERY_JOB  # the plan names Django mail's job
from codemods._mail import drop_in as drop_in
from codemods._project import Project
from codemods._select import guarded_verdict, select
from codemods._types import (
    DELIVERY_NOTE,
    ApplyOptions,
    ApplyResult,
    CodemodError,
    SiteOutcome,
    Status,
    Target,
)
from inventory.config import MigrationTarget
from inventory.models import APPLY_SCHEMA, Confidence, Framework, Idempotency, Inventory, Job
from queue_runtime.bootstrap import describe_worker_bootstrap

INVENTORY_FILE = Path(".migrator") / "inventory.json"
DIRTY_REASON = "uncommitted changes in this file: commit or stash them, or pass --allow-dirty"


def load_inventory(
    root: Path | str, scanner: _stale.Scanner | None = _stale.default_scanner
) -> Inventory:
    """``root/.migrator/inventory.json``, or a fresh scan when there is none."""
    path = Path(root) / INVENTORY_FILE
    if path.is_file():
        return Inventory.model_validate_json(path.read_text(encoding="utf-8"))
    if scanner is None:
        raise CodemodError(f"{path} not found: run `migrator scan` first")
    return scanner(Path(root).resolve())


def thread_job_parameters(job: Job, root: Path) -> list[str] | None:
    """The constructor's parameters when ``job`` is the ``run`` of a ``Thread`` subclass that
    apply makes a job of its constructor's data (:mod:`codemods._threadjob`), else None.

    That data is the job's input once moved: what its idempotency key can name.
    """
    if _threadjob.thread_class(job) is None:
        return None
    found = _threadjob.plan(job, Project(root))
    return None if isinstance(found, str) else found[1]


def plan_apply(
    root: Path | str,
    inventory: Inventory,
    options: ApplyOptions | None = None,
    scanner: _stale.Scanner | None = _stale.default_scanner,
) -> ApplyResult:
    """What ``apply`` would change, and what it leaves alone with the reason. Writes nothing.

    A file with uncommitted changes is never rewritten (unless ``allow_dirty``).
    When the migration needs to change one, the result lists them in ``dirty``
    (:func:`write` then refuses it whole); a dirty file the migration leaves
    alone is read as it is, and the result is the whole migration.
    """
    top = Path(root).resolve()
    opts = effective_options(top, options or ApplyOptions())
    inventory, rescanned, stale = _stale.refresh(top, inventory, scanner if opts.rescan else None)
    check_keys(top, opts, inventory)
    dirty = set() if opts.allow_dirty else git.dirty_files(top)
    result = _plan(top, inventory, opts, _blocked(top, inventory, stale, dirty), dirty, rescanned)
    if DIRTY_REASON not in result.refused.values():
        return result
    whole = _plan(top, inventory, opts, _blocked(top, inventory, stale, set()), set(), rescanned)
    needed = [c.path for c in whole.changes if (top / c.path).resolve() in dirty]
    return result.model_copy(update={"dirty": needed}) if needed else whole


def _plan(
    top: Path,
    inventory: Inventory,
    opts: ApplyOptions,
    blocked: dict[str, str],
    dirty: set[Path],
    rescanned: list[str],
) -> ApplyResult:
    """One plan, never touching ``blocked`` files (nor a ``dirty`` app module)."""
    parsed: dict[str, cst.Module] = {}
    sources = _read_sources(top, inventory, blocked, parsed)
    defs = _Definitions(inventory, parsed)
    app = _app_for_202(top, inventory, dirty)
    project = Project(top, sources)
    targets, outcomes = select(inventory, opts, defs, blocked, app is not None, project)
    plan = plan_changes(sources, targets, _decorations(targets, opts), app, opts.target)
    moved = _by_risk(inventory, set(plan.moved))
    return ApplyResult(
        root=str(top),
        changes=plan.changes,
        outcomes=_ordered([*outcomes, *plan.outcomes]),
        refused={**blocked, **plan.refused},
        jobs=moved,
        rescanned=rescanned,
        records=[j for q in moved if (j := inventory.job(q)) is not None],
        worker=_worker_needs(top, plan.outcomes) if moved else "",
    )


def _worker_needs(top: Path, outcomes: list[SiteOutcome]) -> str:
    """What the workers need for this app; for delivered Django mail, the module to run."""
    text = describe_worker_bootstrap(top)
    if any(o.status is Status.REWRITTEN and o.reason == DELIVERY_NOTE for o in outcomes):
        text += (
            " Django mail is delivered by the runtime's own job: run "
            "`queue-runtime worker queue_runtime.django_mail` with the same settings "
            "(or any app module that imports it)."
        )
    return text


def _blocked(top: Path, inventory: Inventory, stale: list[str], dirty: set[Path]) -> dict[str, str]:
    """Files never to touch, with the reason: changed since the scan, or uncommitted."""
    reason = (
        _stale.older_reason(inventory)
        if inventory.older_than(APPLY_SCHEMA)
        else _stale.STALE_REASON
    )
    blocked = {p: reason for p in stale}
    paths = _inventory_paths(inventory) - set(blocked)
    blocked.update({p: DIRTY_REASON for p in paths if (top / p).resolve() in dirty})
    return blocked


def _decorations(targets: list[Target], opts: ApplyOptions) -> dict[str, str]:
    jobs = {t.job.qualname: t.job for t in targets if not t.delivery}
    return {q: _decoration(j, opts.pools.get(q, opts.default_pool), opts) for q, j in jobs.items()}


def _decoration(job: Job, pool: str, opts: ApplyOptions) -> str:
    """``@job(...)``'s arguments; a guarded job declares its verdict so the gate holds it
    inline, and so does a job the scan could not decide (``idempotency="unknown"``: held
    until the inventory the runtime reads says ``idempotent``, or a load test certifies it)."""
    guarded = guarded_verdict(job)
    if guarded is None and job.idempotency is Idempotency.UNKNOWN:
        guarded = Idempotency.UNKNOWN
    idempotent = job.idempotency is Idempotency.IDEMPOTENT
    if opts.target is MigrationTarget.DJANGO_TASKS:
        arguments = task_arguments(pool, opts.default_pool, idempotent)
    else:
        arguments = decorator_arguments(pool, idempotent)
    verdict = f'idempotency="{guarded.value}"' if guarded is not None else ""
    return ", ".join(part for part in (arguments, verdict) if part)


def _read_sources(
    top: Path, inventory: Inventory, blocked: dict[str, str], parsed: dict[str, cst.Module]
) -> dict[str, str]:
    """Each file the inventory names, read and parsed once (``parsed`` keeps the trees)."""
    sources: dict[str, str] = {}
    for path in sorted(_inventory_paths(inventory) - set(blocked)):
        try:
            text = read_source(top / path)
            parsed[path] = cst.parse_module(text)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as exc:
            blocked[path] = f"cannot read or parse: {exc}".splitlines()[0]
            continue
        sources[path] = text
    return sources


class _Definitions(dict[str, _jobdefs.FunctionDefInfo | None]):
    """Job -> its ``def`` in the source, found when first asked: a file's definitions are
    gathered (a libcst pass with positions, the costly part of a plan) only for the jobs
    the selection looks at past their verdict, so a dry run over a large inventory of
    unknown jobs (``migrator scan``'s Apply column) reads few files."""

    def __init__(self, inventory: Inventory, parsed: dict[str, cst.Module]) -> None:
        super().__init__()
        self._jobs = {job.qualname: job for job in inventory.jobs}
        self._parsed = parsed
        self._gathered: dict[str, list[_jobdefs.FunctionDefInfo]] = {}

    def __missing__(self, qualname: str) -> _jobdefs.FunctionDefInfo | None:
        job = self._jobs.get(qualname)
        path = job.location.path if job is not None and job.location else None
        module = self._parsed.get(path) if path is not None else None
        if job is None or path is None or module is None:
            found = None
        else:
            if path not in self._gathered:
                self._gathered[path] = _jobdefs.gather(module)
            found = _jobdefs.find(self._gathered[path], job)
        self[qualname] = found
        return found

    def get(self, qualname: str, default: object = None) -> _jobdefs.FunctionDefInfo | None:
        return self[qualname]


def _inventory_paths(inventory: Inventory) -> set[str]:
    return {s.location.path for s in inventory.sites} | {
        j.location.path for j in inventory.jobs if j.location
    }


def _app_for_202(top: Path, inventory: Inventory, dirty: set[Path]) -> AppModule | None:
    """The FastAPI app to add the status endpoint to, when a handler could answer 202."""
    if not any(s.result_used and s.handler is Framework.FASTAPI for s in inventory.sites):
        return None
    app = status_endpoint.find_app(top)
    if app is None or (top / app.path).resolve() in dirty:
        return None
    return app


_CONFIDENCE = {Confidence.HIGH: 0, Confidence.MEDIUM: 1, Confidence.LOW: 2}


def _by_risk(inventory: Inventory, qualnames: set[str]) -> list[str]:
    """Smallest risk first: safest verdict, highest confidence, fewest sites."""
    jobs = [j for j in inventory.jobs if j.qualname in qualnames]
    return [j.qualname for j in sorted(jobs, key=lambda j: _risk(inventory, j))]


def _risk(inventory: Inventory, job: Job) -> tuple[int, int, int, str]:
    sites = len(inventory.sites_of(job.qualname))
    return job.idempotency.severity, _CONFIDENCE[job.confidence], sites, job.qualname


def _ordered(outcomes: list[SiteOutcome]) -> list[SiteOutcome]:
    return sorted(outcomes, key=lambda o: (o.site.location.path, o.site.location.line, o.site.job))


def write(result: ApplyResult) -> None:
    """Apply ``result``'s changes to the files (all verified to parse first), or none of them.

    Refused whole (:class:`CodemodError`, nothing written) when the migration
    needs files with uncommitted changes: writing the rest would leave a half
    migration behind.
    """
    if result.dirty:
        raise CodemodError(
            f"nothing written: the migration changes {len(result.dirty)} file(s) with uncommitted"
            f" changes ({', '.join(result.dirty)}): commit or stash them and run it again,"
            " or pass --allow-dirty to rewrite them as they are"
        )
    write_changes(Path(result.root), result.changes)


def create_branches(
    root: Path | str,
    inventory: Inventory,
    name: str,
    options: ApplyOptions | None = None,
    scanner: _stale.Scanner | None = _stale.default_scanner,
) -> tuple[ApplyResult, list[BranchReport]]:
    """Branches ``name`` (or ``name-1``, ``name-2``... with ``max_sites``), one commit per job.

    The branches stack (each starts where the previous one ends) and are
    built without touching the checkout; each gets ``.migrator/prs/<branch>.md``.
    They are planned against HEAD's content (a snapshot beside the checkout),
    so changes already written with ``--write`` and not yet committed are what
    the branches commit, as the README's order (``--write``, then ``--branch``)
    expects; the checkout's uncommitted state is never read.
    """
    top = Path(root).resolve()
    opts = (options or ApplyOptions()).model_copy(update={"allow_dirty": True})
    with git.head_snapshot(top) as snapshot:
        fresh, rescanned, _ = _stale.refresh(snapshot, inventory, scanner if opts.rescan else None)

        def plan(step: ApplyOptions) -> ApplyResult:
            planned = plan_apply(snapshot, fresh, step, scanner)
            update = {"root": str(top), "rescanned": rescanned or planned.rescanned}
            return planned.model_copy(update=update)

        return create(top, fresh, name, opts, plan)
