"""Hand-built Inventory pieces for the plan tests."""

from __future__ import annotations

from inventory.models import (
    CallSite,
    Confidence,
    Effect,
    EffectKind,
    Evidence,
    Idempotency,
    Inventory,
    Job,
    Location,
    Pattern,
)


def make_site(
    job: str, line: int, *, result_used: bool = False, path: str = "app/views.py"
) -> CallSite:
    return CallSite(
        location=Location(path=path, line=line),
        pattern=Pattern.THREAD,
        job=job,
        enclosing_function="app.views.handler",
        result_used=result_used,
        result_use_lines=[line + 1] if result_used else [],
        fingerprint=f"fp-{job}-{line}",
    )


def make_job(
    qualname: str,
    verdict: Idempotency,
    confidence: Confidence = Confidence.HIGH,
    *,
    parameters: list[str] | None = None,
    effects: list[Effect] | None = None,
    suggested_key: str | None = None,
    reason: str = "the verdict's reason",
) -> Job:
    return Job(
        qualname=qualname,
        location=Location(path="app/tasks.py", line=1),
        idempotency=verdict,
        confidence=confidence,
        parameters=parameters if parameters is not None else ["order_id"],
        effects=effects or [],
        evidence=[Evidence(message="an effect"), Evidence(message=reason)],
        suggested_key=suggested_key,
    )


def keyed_payment(template: str) -> Effect:
    return Effect(
        kind=EffectKind.PAYMENT,
        location=Location(path="app/pay.py", line=7),
        api="gateway.capture",
        keyed=True,
        detail=f'idempotency_key=f"{template}" is derived from the job\'s inputs',
    )


def inventory(jobs: list[Job], sites: list[CallSite]) -> Inventory:
    return Inventory(root="/srv/app", jobs=jobs, sites=sites)
