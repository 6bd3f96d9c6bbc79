"""What a load test runs: :class:`LoadTestSpec`, burst profiles, chaos kinds.

A burst profile is a comma-separated list of ``FACTORx:DURATION[@START]``:
``10x:30s`` is ten times the steady rate for 30 seconds, starting in the
middle of the run; ``5x:2s@1s`` starts one second in. Durations are ``250ms``,
``30s``, ``2m`` or plain seconds.
"""

from __future__ import annotations

import re
import tomllib
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from migrator.errors import MigratorError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")
_BURST = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x\s*:\s*([^@]+?)\s*(?:@\s*(.+?))?\s*$", re.IGNORECASE)


class ChaosKind(StrEnum):
    """Faults the load test injects while the load runs."""

    KILL_WORKERS = "kill-workers"  # SIGKILL a worker mid-batch, then start a new one
    REDIS_RESTART = "redis-restart"  # stop and start the (private) Redis the workers use
    PG_TERMINATE = "pg-terminate"  # pg_terminate_backend of the workers' connections


class SpecError(MigratorError, ValueError):
    """An invalid load-test option (burst profile, duration, chaos kind, generator)."""


def declared_key(job: str, root: Path) -> str | None:
    """The key ``[tool.migrator.jobs."<job>"]`` of ``root/pyproject.toml`` declares, if any."""
    path = root / "pyproject.toml"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"{path}: {exc}") from exc
    key = table.get("tool", {}).get("migrator", {}).get("jobs", {}).get(job, {}).get("key")
    return str(key) if key else None


def parse_duration(text: str | float | int) -> float:
    """``250ms`` / ``30s`` / ``2m`` / ``12`` -> seconds (> 0)."""
    if isinstance(text, int | float):
        seconds = float(text)
    else:
        match = _DURATION.match(text)
        if match is None:
            raise SpecError(f"invalid duration {text!r} (use 250ms, 30s, 2m or seconds)")
        value, unit = float(match.group(1)), match.group(2) or "s"
        seconds = value * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]
    if seconds <= 0:
        raise SpecError(f"duration {text!r} must be positive")
    return seconds


class Burst(BaseModel):
    """``factor`` times the steady rate for ``seconds``, from ``start`` (None: centred)."""

    model_config = ConfigDict(frozen=True)

    factor: float = Field(gt=0)
    seconds: float = Field(gt=0)
    start: float | None = Field(default=None, ge=0)

    def window(self, duration: float) -> tuple[float, float]:
        """[begin, end) offsets in seconds within a run of ``duration``."""
        begin = self.start if self.start is not None else max(0.0, (duration - self.seconds) / 2)
        return begin, begin + self.seconds


def parse_burst(profile: str | None) -> list[Burst]:
    """``"10x:30s"``, ``"10x:30s@5s,3x:1m"`` -> bursts; ``None`` / ``""`` -> none."""
    if not profile or not profile.strip():
        return []
    bursts = []
    for part in profile.split(","):
        match = _BURST.match(part)
        if match is None:
            raise SpecError(
                f"invalid burst {part.strip()!r} (use FACTORx:DURATION[@START], e.g. 10x:30s)"
            )
        factor, seconds, start = match.groups()
        bursts.append(
            Burst(
                factor=float(factor),
                seconds=parse_duration(seconds),
                start=parse_duration(start) if start else None,
            )
        )
    return bursts


def parse_chaos(text: str | None) -> list[ChaosKind]:
    """``"kill-workers,redis-restart"`` -> kinds, in the given order, without repeats."""
    kinds: list[ChaosKind] = []
    for part in (text or "").split(","):
        name = part.strip()
        if not name:
            continue
        try:
            kind = ChaosKind(name)
        except ValueError:
            known = ", ".join(k.value for k in ChaosKind)
            raise SpecError(f"unknown chaos kind {name!r} (known: {known})") from None
        if kind not in kinds:
            kinds.append(kind)
    return kinds


class LoadTestSpec(BaseModel):
    """Everything one load test needs; the CLI builds it from its options."""

    model_config = ConfigDict(extra="forbid")

    job: str = Field(description="the registered job name (module.function unless named)")
    sandbox: str = Field(description="settings module whose import configures the sandbox")
    job_module: str | None = Field(
        default=None, description="module registering the job (default: from the job name)"
    )
    rate: float = Field(gt=0, description="steady enqueue rate, jobs per second")
    duration: float = Field(gt=0, description="seconds of load")
    bursts: list[Burst] = Field(default_factory=list)
    chaos: list[ChaosKind] = Field(default_factory=list)
    args: str | None = Field(
        default=None, description="argument generator MODULE:FUNCTION, called with the index"
    )
    key: str | None = Field(
        default=None,
        description="idempotency key template, formatted with {run} and {i} (default: none)",
    )
    app_key: str | None = Field(
        default=None,
        description="the app's real idempotency key (template or package.module:function, as in "
        '[tool.migrator.jobs."<job>"] key): the load then enqueues pairs of different calls '
        "with it (``key`` is then not used), and a pair given one key fails the run",
    )
    workers: int = Field(default=2, ge=1, le=32)
    concurrency: int | None = Field(default=None, ge=1)
    sla_p99_ms: float = Field(default=1000.0, gt=0)
    max_dead: int = Field(default=0, ge=0, description="dead-lettered jobs tolerated")
    drain_timeout: float = Field(default=60.0, gt=0)
    kill_count: int = Field(default=2, ge=1, description="workers SIGKILLed by kill-workers")
    certify_by: str | None = None

    @field_validator("args")
    @classmethod
    def _generator_shape(cls, value: str | None) -> str | None:
        if value is not None and (value.count(":") != 1 or not all(value.split(":"))):
            raise ValueError(f"--args must be MODULE:FUNCTION, not {value!r}")
        return value

    @model_validator(mode="after")
    def _bursts_fit(self) -> LoadTestSpec:
        for burst in self.bursts:
            begin, end = burst.window(self.duration)
            if end > self.duration + 1e-9:
                raise ValueError(
                    f"burst {burst.factor:g}x for {burst.seconds:g}s from {begin:g}s"
                    f" ends after the {self.duration:g}s run"
                )
        return self

    def rate_at(self, offset: float) -> float:
        """Jobs per second at ``offset`` seconds into the run (bursts multiply, the largest wins)."""
        factor = 1.0
        for burst in self.bursts:
            begin, end = burst.window(self.duration)
            if begin <= offset < end:
                factor = max(factor, burst.factor)
        return self.rate * factor

    def planned_jobs(self) -> int:
        """How many jobs the schedule enqueues over the whole run."""
        return len(schedule(self))


def schedule(spec: LoadTestSpec) -> list[float]:
    """Offsets (seconds) at which each job is enqueued: the integral of the rate, stepped."""
    step = 0.01
    offsets: list[float] = []
    due = 0.0
    t = 0.0
    while t < spec.duration - 1e-12:
        due += spec.rate_at(t) * min(step, spec.duration - t)
        while due >= 1.0 - 1e-9:
            offsets.append(round(t, 6))
            due -= 1.0
        t += step
    return offsets
