"""What a job runs with under given Settings: pool, retry policy, timeout, priority.

Configuration beats code for everything but the pool: a job declared for one
pool in code and configured for another is refused (the two disagree about
where it runs; someone must decide), as is a pool that is not configured.
"""

from __future__ import annotations

from dataclasses import dataclass

from queue_runtime.config import JobConfig, RetryPolicy, Settings
from queue_runtime.definition import JobDefinition
from queue_runtime.errors import PoolMismatchError


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    pool: str
    retry: RetryPolicy
    timeout: float
    priority: int


def resolve_spec(job: JobDefinition, settings: Settings) -> JobSpec:
    cfg = settings.jobs.get(job.name) or JobConfig()
    return JobSpec(
        name=job.name,
        pool=_pool(job, cfg, settings),
        retry=cfg.retry or job.retry or settings.retry,
        timeout=cfg.timeout or job.timeout or settings.job_timeout,
        priority=_first_set(cfg.priority, job.priority, 0),
    )


def _pool(job: JobDefinition, cfg: JobConfig, settings: Settings) -> str:
    declared = job.declared_pool
    if cfg.pool and declared and cfg.pool != declared:
        raise PoolMismatchError(
            f"{job.name} is declared with @job(pool={declared!r}) but configured for pool {cfg.pool!r}"
        )
    pool = cfg.pool or declared or settings.default_pool
    if pool not in settings.pools:
        raise PoolMismatchError(
            f"{job.name} wants pool {pool!r}, which is not configured (pools: {sorted(settings.pools)})"
        )
    return pool


def _first_set(*values: int | None) -> int:
    return next(v for v in values if v is not None)
