"""Runtime configuration: one validated pydantic model, built once.

Sources, later ones win: defaults -> ``[tool.queue_runtime]`` in the app's
``pyproject.toml`` -> environment (``QUEUE_RUNTIME_DATABASE_URL``,
``QUEUE_RUNTIME_REDIS_URL``, ``QUEUE_RUNTIME_MODE``) -> explicit arguments to
:func:`queue_runtime.configure`. Nothing here connects to anything.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from queue_runtime._redis_url import check_node_url, is_cluster_url, parse_cluster_url
from queue_runtime.errors import QueueError
from queue_runtime.periodic import Schedule


class Mode(StrEnum):
    INLINE = "inline"  # enqueue runs the job at once, in-process (tests, rollout start)
    QUEUE = "queue"  # enqueue stores the job in PostgreSQL for workers


class Idempotency(StrEnum):
    """A job's idempotency, declared (``@job(idempotency=...)``) or from the analyzer's inventory."""

    IDEMPOTENT = "idempotent"
    NEEDS_KEY = "needs_key"  # safe only with an idempotency key (the execution guard)
    NON_IDEMPOTENT = "non_idempotent"
    UNSAFE = "unsafe"  # money or account state
    UNKNOWN = "unknown"


class RolloutMode(StrEnum):
    """Where a job's enqueues run: in-process as before, a share async, or all async."""

    INLINE = "inline"
    PERCENT = "percent"
    ASYNC = "async"


class GateAction(StrEnum):
    """What enqueue does with a gated job that holds no certification for its current code."""

    INLINE = "inline"  # run it in-process, exactly as before the migration
    RAISE = "raise"  # raise GateClosed


class UrlScheme(StrEnum):
    """The scheme ``url_for`` gives external links built in a worker (Flask's PREFERRED_URL_SCHEME)."""

    HTTP = "http"
    HTTPS = "https"


class RetryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(default=5, ge=1)
    base_delay: float = Field(default=0.5, gt=0, description="Seconds; first backoff ceiling.")
    max_delay: float = Field(default=300.0, gt=0, description="Seconds; backoff cap.")
    permanent_exceptions: list[str] = Field(
        default_factory=list,
        description="Dotted exception class names that go to the DLQ at once.",
    )


class PoolConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    priority: int = Field(
        default=0, description="Higher pools are polled more often by shared workers."
    )
    concurrency: int = Field(default=8, ge=1)
    weight: int = Field(
        default=1, ge=1, description="Claims per polling round when a worker serves several pools."
    )


class SloPolicy(BaseModel):
    """A job's service level: breached over ``window_seconds``, the workers roll it back to inline.

    Each threshold is optional; ``max_failure_rate`` is judged once at least
    ``min_attempts`` attempts finished in the window (one failure of one run
    is not a rate).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_failure_rate: float | None = Field(default=None, ge=0, le=1)
    max_dead: int | None = Field(default=None, ge=0, description="Dead letters in the window.")
    max_lag_seconds: float | None = Field(default=None, gt=0)
    window_seconds: float = Field(default=300.0, gt=0)
    min_attempts: int = Field(default=10, ge=1)


class JobConfig(BaseModel):
    """Per-job overrides, keyed by the job's registered name."""

    model_config = ConfigDict(frozen=True)

    pool: str | None = None
    retry: RetryPolicy | None = None
    timeout: float | None = Field(default=None, gt=0, description="Seconds.")
    priority: int | None = Field(
        default=None, ge=-32768, le=32767, description="Stored as a smallint, as enqueue's."
    )
    override_reason: str | None = Field(
        default=None,
        description="Why the job's declaration (idempotent) stands against the analyzer's verdict.",
    )
    slo: SloPolicy | None = Field(
        default=None, description="Thresholds whose breach rolls the job back to inline."
    )


class PeriodicConfig(BaseModel):
    """A periodic declaration in config (``[tool.queue_runtime.periodic."app.jobs.x"]``).

    ``every`` (``"5m"``, ``"1h30m"``, seconds) or ``cron`` (five fields, in
    ``timezone``, default UTC): exactly one. Config beats a declaration in code.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    every: str | float | None = None
    cron: str | None = None
    timezone: str | None = None

    @model_validator(mode="after")
    def _valid(self) -> PeriodicConfig:
        try:
            self.schedule()
        except QueueError as exc:  # pydantic reports ValueErrors with the field's location
            raise ValueError(exc.detail) from None
        return self

    def schedule(self) -> Schedule:
        return Schedule.of(self.every, self.cron, self.timezone)


def _tenant_cap(cap: int) -> int:
    # A cap of 0 (or less) would defer that tenant's jobs forever, each deferral adding an attempt.
    if cap < 1:
        raise ValueError(
            f"{cap}: a tenant cap is at least 1 (a tenant without a cap: leave it out of"
            " tenant_caps and default_tenant_cap unset)"
        )
    return cap


TenantCap = Annotated[int, AfterValidator(_tenant_cap)]


def _default_pools() -> dict[str, PoolConfig]:
    return {
        "transactional": PoolConfig(priority=10, concurrency=8, weight=4),
        "batch": PoolConfig(priority=0, concurrency=4, weight=1),
    }


class Settings(BaseModel):
    # validate_by_name: configure(schema_name=...) works as well as the alias `schema`.
    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True
    )

    mode: Mode | None = Field(
        default=None, description="None: queue if database_url is set, else inline."
    )
    database_url: str | None = None
    # Before redis_url: its validator reads it (a cluster's URL names several nodes).
    redis_cluster: bool = Field(
        default=False,
        description="redis_url names seed nodes of a Redis Cluster (as redis+cluster:// does).",
    )
    redis_url: str | None = "redis://127.0.0.1:6379/0"
    schema_name: str = Field(
        default="queue_runtime", alias="schema", description="PostgreSQL schema."
    )
    redis_prefix: str = "qr"
    pools: dict[str, PoolConfig] = Field(default_factory=_default_pools)
    default_pool: str = "batch"
    jobs: dict[str, JobConfig] = Field(default_factory=dict)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    job_timeout: float = Field(default=300.0, gt=0)
    lease_ttl: float = Field(
        default=30.0, gt=0, description="Seconds a lease lives without renewal."
    )
    claim_batch: int = Field(default=256, ge=1, le=1000)
    poll_interval: float = Field(
        default=1.0, gt=0, description="Fallback polling when no NOTIFY arrives."
    )
    tenant_caps: dict[str, TenantCap] = Field(default_factory=dict)
    default_tenant_cap: TenantCap | None = None
    max_payload_bytes: int = Field(default=256 * 1024, ge=1)
    history_retention_days: float = Field(default=7.0, ge=0)
    key_retention_days: float = Field(
        default=7.0,
        gt=0,
        description="Days an idempotency key is remembered; after it, the key names a new call.",
    )
    periodic: dict[str, PeriodicConfig] = Field(
        default_factory=dict, description="Periodic jobs by registered name (every / cron)."
    )
    shutdown_grace: float = Field(default=30.0, ge=0)
    unknown_job_deadline: float = Field(
        default=3600.0,
        gt=0,
        description="Seconds a job whose name the workers that claim it have not registered"
        " waits for one that has (a rolling deploy, another app on the pool), then the DLQ.",
    )
    gate_action: GateAction = Field(
        default=GateAction.INLINE, description="Gated job without a certification: inline | raise."
    )
    rollout_refresh: float = Field(
        default=2.0,
        gt=0,
        description="Seconds a process caches the rollout and certification tables.",
    )
    default_rollout: RolloutMode = Field(
        default=RolloutMode.ASYNC, description="Rollout mode of a job with no stored rollout."
    )
    shadow_min_calls: int = Field(
        default=100,
        ge=0,
        description="Clean shadow round trips a job needs before `rollout set J async` or a %.",
    )
    shadow_flush_calls: int = Field(
        default=100, ge=1, description="Shadow evidence is flushed every this many calls..."
    )
    shadow_flush_seconds: float = Field(
        default=5.0, gt=0, description="...or after this many seconds, and at exit."
    )
    inventory_path: str | None = Field(
        default=None, description="The analyzer's inventory JSON (.migrator/inventory.json)."
    )
    # Framework context of the workers (queue_runtime.bootstrap): at most one framework.
    django_settings: str | None = Field(
        default=None,
        description="Django settings module: workers call django.setup() before the app module.",
    )
    flask_app: str | None = Field(
        default=None,
        description="Flask app object or factory, 'pkg.module:app' or 'pkg.module:create_app'.",
    )
    server_name: str | None = Field(
        default=None, description="Flask SERVER_NAME in workers, so url_for builds real links."
    )
    url_scheme: UrlScheme | None = Field(
        default=None, description="Flask PREFERRED_URL_SCHEME in workers."
    )

    @model_validator(mode="after")
    def _pools_exist(self) -> Settings:
        if self.default_pool not in self.pools:
            raise ValueError(
                f"default_pool {self.default_pool!r} is not one of the pools {sorted(self.pools)}"
            )
        for name, cfg in self.jobs.items():
            if cfg.pool is not None and cfg.pool not in self.pools:
                raise ValueError(
                    f"job {name!r} is configured for pool {cfg.pool!r}, which is not defined"
                )
        return self

    @field_validator("redis_url")
    @classmethod
    def _node_url(cls, url: str | None, info: ValidationInfo) -> str | None:
        """A malformed URL fails here, in one line, not as redis-py's traceback in a worker."""
        if url and not (info.data.get("redis_cluster") or is_cluster_url(url)):
            try:
                check_node_url(url)
            except QueueError as exc:
                raise ValueError(exc.detail) from None
        return url

    @model_validator(mode="after")
    def _cluster_url(self) -> Settings:
        """A Redis Cluster URL is read now: a malformed one fails here, not in a worker."""
        if self.redis_url and (self.redis_cluster or is_cluster_url(self.redis_url)):
            try:
                parse_cluster_url(self.redis_url)
            except QueueError as exc:
                raise ValueError(exc.detail) from None
            if "{" in self.redis_prefix or "}" in self.redis_prefix:
                raise ValueError("redis_prefix: no braces on a Redis Cluster (it is the hash tag)")
        return self

    @model_validator(mode="after")
    def _one_framework(self) -> Settings:
        if self.django_settings and self.flask_app:
            raise ValueError("django_settings and flask_app are exclusive: a worker runs one app")
        if (self.server_name or self.url_scheme) and not self.flask_app:
            raise ValueError("server_name and url_scheme configure a flask_app: set it too")
        return self

    @property
    def effective_mode(self) -> Mode:
        if self.mode is not None:
            return self.mode
        return Mode.QUEUE if self.database_url else Mode.INLINE
