"""Review branches: one commit per job, stacked branches of at most N sites, PR texts.

Commits are made with git plumbing beside the checkout (see ``git``). Each
commit is the plan for the jobs so far, computed from the original files, so
positions never go stale between commits.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from codemods._changes import git, pr
from codemods._types import ApplyOptions, ApplyResult, CodemodError, JobBatch, Status
from inventory.models import Inventory

PRS_DIR = Path(".migrator") / "prs"

Planner = Callable[[ApplyOptions], ApplyResult]


class BranchReport(BaseModel):
    name: str
    jobs: list[str]
    commits: list[str]
    pr_path: str


def batches(result: ApplyResult, max_sites: int | None) -> list[JobBatch]:
    """The moved jobs in branches of at most ``max_sites`` rewritten sites, in risk order.

    A job is never split across branches (its registration travels with its
    sites): a job with more sites than the limit gets a branch of its own.
    """
    counts = {
        q: sum(1 for o in result.by_status(Status.REWRITTEN) if o.site.job == q)
        for q in result.jobs
    }
    out: list[JobBatch] = []
    for q in result.jobs:
        if out and (max_sites is None or out[-1].sites + counts[q] <= max_sites):
            out[-1] = JobBatch(jobs=[*out[-1].jobs, q], sites=out[-1].sites + counts[q])
        else:
            out.append(JobBatch(jobs=[q], sites=counts[q]))
    return out


def create(
    top: Path, inventory: Inventory, name: str, opts: ApplyOptions, plan: Planner
) -> tuple[ApplyResult, list[BranchReport]]:
    """Plan everything, then build the branches (refusing names that exist)."""
    result = plan(opts)
    repo = git.toplevel(top)
    if repo is None:
        raise CodemodError(f"{top} is not inside a git repository: --branch needs one")
    groups = batches(result, opts.max_sites)
    names = [name] if len(groups) == 1 else [f"{name}-{i}" for i in range(1, len(groups) + 1)]
    taken = [n for n in names if git.branch_exists(repo, n)]
    if taken:
        raise CodemodError(f"branch {taken[0]} already exists: choose another --branch name")
    return result, _build(
        top, repo, inventory, opts, plan, result, list(zip(names, groups, strict=True))
    )


def _build(
    top: Path,
    repo: Path,
    inventory: Inventory,
    opts: ApplyOptions,
    plan: Planner,
    result: ApplyResult,
    groups: list[tuple[str, JobBatch]],
) -> list[BranchReport]:
    parent, done, reports, base = git.resolve(repo, "HEAD"), [], [], None
    for branch, group in groups:
        commits = []
        for qualname in group.jobs:
            done.append(qualname)
            parent = _commit_job(
                top,
                repo,
                parent,
                qualname,
                plan(opts.model_copy(update={"jobs": tuple(done)})),
                inventory,
            )
            commits.append(parent)
        git.create_branch(repo, branch, parent)
        pr_path = _write_pr(top, branch, group, result, inventory, base)
        reports.append(
            BranchReport(name=branch, jobs=group.jobs, commits=commits, pr_path=str(pr_path))
        )
        base = branch
    return reports


def _commit_job(
    top: Path, repo: Path, parent: str, qualname: str, step: ApplyResult, inventory: Inventory
) -> str:
    """A commit holding the plan for every job so far (``step``), on top of ``parent``."""
    files = {(top / c.path).resolve(): c.after for c in step.changes}
    return git.commit_files(repo, parent, files, _commit_message(qualname, step, inventory))


def _write_pr(
    top: Path,
    branch: str,
    group: JobBatch,
    result: ApplyResult,
    inventory: Inventory,
    base: str | None,
) -> Path:
    path = top / PRS_DIR / f"{branch}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(pr.render(branch, group.jobs, result, inventory, base), encoding="utf-8")
    return path


def _commit_message(qualname: str, step: ApplyResult, inventory: Inventory) -> str:
    job = pr.job_record(step, inventory, qualname)
    verdict = f"{job.idempotency}, {job.confidence} confidence" if job else "moved"
    sites = [o for o in step.by_status(Status.REWRITTEN) if o.site.job == qualname]
    title = (
        f"Deliver the Django mail of {qualname} from queue_runtime workers"
        if step.delivered_only(qualname)
        else f"Move {qualname} onto queue_runtime ({verdict})"
    )
    lines = [title, ""]
    lines += [f"- {o.site.location.path}:{o.site.location.line} {o.site.pattern}" for o in sites]
    lines += ["", 'Rollback: mode = "inline" in [tool.queue_runtime].']
    return "\n".join(lines)
