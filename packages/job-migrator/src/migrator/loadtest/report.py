"""The load-test report and the pass/fail rules.

A run passes when:

- every enqueued job is accounted for: succeeded, or dead-lettered within
  ``max_dead``; none is missing (``lost``) or still unfinished after the drain,
  and the counts add up (each job made is in exactly one of them: a cancelled
  job is in none);
- no idempotency key completed twice (the execution ledger: the job body ran
  to completion more than once for one key; a job without a key is its own key);
- the p99 dispatch latency (enqueue -> first start) is within the SLA;
- every chaos kind asked for actually happened;
- with the app's real key (``spec.app_key``): no two different calls got one
  key (pairs of calls differing in one argument each, :mod:`migrator.loadtest.load`):
  the second of such a pair would never run.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from migrator.errors import ExitCode
from migrator.loadtest.spec import ChaosKind, LoadTestSpec


class ChaosEvent(BaseModel):
    kind: ChaosKind
    at: datetime
    offset: float = Field(description="seconds since the load started")
    detail: str


class Execution(BaseModel):
    """One run of the job body, from the ledger."""

    job_id: int
    attempt: int
    pid: int
    started_at: datetime
    finished_at: datetime | None
    failed: bool = False


class DuplicateCompletion(BaseModel):
    """A key whose job body ran to completion more than once."""

    key: str
    keyed: bool = Field(description="False: the job had no idempotency key (its id is the key)")
    completions: int
    executions: list[Execution]
    attempt_errors: list[str] = Field(
        default_factory=list, description="why attempts of these jobs failed (queue history)"
    )


class KeyMerge(BaseModel):
    """Two different calls the app's key gave one key: the second would never run."""

    key: str
    first: int = Field(description="index of the call that got the key first")
    second: int
    differs_in: str | None = Field(default=None, description="the argument the two differ in")


class Latency(BaseModel):
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None


class LoadTestReport(BaseModel):
    job: str
    run_id: str
    fingerprint: str | None = None
    spec: LoadTestSpec
    started_at: datetime
    finished_at: datetime
    # Counts are never negative: a forged -7 must not balance the sums evaluate() checks.
    enqueued: int = Field(default=0, ge=0)
    enqueue_deduplicated: int = Field(
        default=0, ge=0, description="enqueues answered by an existing key"
    )
    succeeded: int = Field(default=0, ge=0)
    dead: int = Field(default=0, ge=0)
    unfinished: int = Field(default=0, ge=0)
    lost: int = Field(default=0, ge=0)
    throughput: float = Field(default=0.0, description="jobs succeeded per second")
    latency: Latency = Field(default_factory=Latency)
    executions: int = Field(default=0, ge=0)
    duplicate_deliveries: int = Field(default=0, ge=0, description="jobs whose body started twice+")
    duplicate_completions: list[DuplicateCompletion] = Field(default_factory=list)
    retries: int = Field(default=0, ge=0)
    chaos_events: list[ChaosEvent] = Field(default_factory=list)
    app_key: str | None = Field(default=None, description="the app's real key the load used")
    key_pairs: int = Field(default=0, description="pairs of different calls under the app's key")
    key_merges: list[KeyMerge] = Field(default_factory=list)
    passed: bool = False
    reasons: list[str] = Field(default_factory=list)
    certified: bool = False
    certified_by: str | None = None
    certified_into: str | None = None  # "<database>/<schema> (why there)"
    notes: list[str] = Field(default_factory=list)

    def key_line(self) -> str:
        """What the load did with the app's real key, in one line."""
        if self.app_key is None:
            return "none declared: per-job load keys (the app's key was not exercised)"
        merged = len(self.key_merges)
        return f"{self.app_key}: {self.key_pairs} pair(s) of different calls, " + (
            f"{merged} merged into one key" if merged else "each call its own key"
        )

    @property
    def exit_code(self) -> ExitCode:
        """OK passed and certified; FINDINGS failed, or passed but could not certify (a pass
        that could not certify, the app's database unreachable..., is not done: its note says why).
        """
        return ExitCode.OK if self.passed and self.certified else ExitCode.FINDINGS

    def figures(self) -> dict[str, object]:
        """The numbers a certification records."""
        return {
            "run_id": self.run_id,
            "rate": self.spec.rate,
            "duration": self.spec.duration,
            "workers": self.spec.workers,
            "chaos": [k.value for k in self.spec.chaos],
            "enqueued": self.enqueued,
            "succeeded": self.succeeded,
            "dead": self.dead,
            "max_dead": self.spec.max_dead,
            "unfinished": self.unfinished,
            "lost": self.lost,
            "throughput": round(self.throughput, 2),
            "p50_ms": self.latency.p50_ms,
            "p95_ms": self.latency.p95_ms,
            "p99_ms": self.latency.p99_ms,
            "sla_p99_ms": self.spec.sla_p99_ms,
            "duplicate_deliveries": self.duplicate_deliveries,
            "duplicate_completions": len(self.duplicate_completions),
            "retries": self.retries,
            "chaos_events": len(self.chaos_events),
        }


def evaluate(report: LoadTestReport) -> tuple[bool, list[str]]:
    """(passed, reasons it did not): the rules in the module docstring.

    Only the figures count, never the report's own ``passed``: ``migrator gate
    certify`` calls this on a report read from a file.
    """
    spec = report.spec
    reasons: list[str] = []
    if report.enqueued == 0:
        reasons.append("no job was enqueued")
    unbalanced = _unaccounted(report)
    if unbalanced:
        reasons.append(unbalanced)
    if report.lost:
        reasons.append(f"{report.lost} job(s) lost: enqueued, then found nowhere")
    if report.unfinished:
        reasons.append(
            f"{report.unfinished} job(s) not finished {spec.drain_timeout:g}s after the load"
        )
    if report.dead > spec.max_dead:
        reasons.append(f"{report.dead} job(s) dead-lettered (allowed: {spec.max_dead})")
    if report.duplicate_completions:
        twice = sum(d.completions for d in report.duplicate_completions)
        reasons.append(
            f"{len(report.duplicate_completions)} key(s) completed more than once"
            f" ({twice} completions)"
        )
    p99 = report.latency.p99_ms
    if p99 is None and report.enqueued:
        reasons.append("no dispatch latency measured (no execution recorded)")
    elif p99 is not None and p99 > spec.sla_p99_ms:
        reasons.append(f"p99 dispatch latency {p99:.0f} ms > SLA {spec.sla_p99_ms:g} ms")
    if report.key_merges:
        reasons.append(_merge_reason(report))
    happened = {e.kind for e in report.chaos_events}
    for kind in spec.chaos:
        if kind not in happened:
            reasons.append(f"chaos {kind.value} was asked for and did not happen")
    return not reasons, reasons


def _unaccounted(report: LoadTestReport) -> str | None:
    """Why the counts do not add up, if they do not: every job made is in exactly one of them."""
    made = report.enqueued - report.enqueue_deduplicated
    counted = report.succeeded + report.dead + report.unfinished + report.lost
    if counted == made:
        return None
    return (
        f"the figures do not add up: {made} job(s) made ({report.enqueued} enqueued,"
        f" {report.enqueue_deduplicated} answered by an existing key), {counted} accounted for"
        f" ({report.succeeded} succeeded, {report.dead} dead, {report.unfinished} unfinished,"
        f" {report.lost} lost)"
    )


def _merge_reason(report: LoadTestReport) -> str:
    merge = report.key_merges[0]
    differs = f", differing in {merge.differs_in}" if merge.differs_in else ""
    return (
        f"the app's key {report.app_key!r} gave {len(report.key_merges)} pair(s) of different "
        f"calls one key, so the second never runs (e.g. calls {merge.first} and "
        f"{merge.second}{differs}: {merge.key!r}); put what tells them apart in the key, or use {{*}}"
    )


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100), at least 1
    return ordered[int(rank) - 1]


def latency_of(values_ms: list[float]) -> Latency:
    def r(v: float | None) -> float | None:
        return None if v is None else round(v, 2)

    return Latency(
        p50_ms=r(percentile(values_ms, 50)),
        p95_ms=r(percentile(values_ms, 95)),
        p99_ms=r(percentile(values_ms, 99)),
        max_ms=r(max(values_ms) if values_ms else None),
    )
