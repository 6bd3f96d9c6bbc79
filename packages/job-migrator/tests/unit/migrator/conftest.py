"""A small hand-written Inventory: what the renderers and the CI gate read."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import (
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
    ScanError,
    ScanErrorKind,
)


def site(path: str, line: int, job: str, verdict: Idempotency, fingerprint: str) -> CallSite:
    return CallSite(
        location=Location(path=path, line=line, column=4),
        pattern=Pattern.THREAD,
        job=job,
        target_source=job.rsplit(".", 1)[-1],
        idempotency=verdict,
        fingerprint=fingerprint,
    )


def job(qualname: str, verdict: Idempotency, message: str, chain: list[str]) -> Job:
    where = Location(path="shop/tasks.py", line=10)
    return Job(
        qualname=qualname,
        location=where,
        idempotency=verdict,
        confidence=Confidence.HIGH,
        effects=[
            Effect(kind=EffectKind.PAYMENT, location=where, api="stripe.Refund.create", chain=chain)
        ],
        evidence=[
            Evidence(message="reads the database", location=where),
            Evidence(message=message, location=where, chain=chain),
        ],
    )


@pytest.fixture
def inventory(tmp_path: Path) -> Inventory:
    return Inventory(
        root=str(tmp_path),
        tool_version="0.1.0",
        sites=[
            site("shop/views.py", 12, "shop.tasks.refund", Idempotency.UNSAFE, "fp-refund"),
            site("shop/views.py", 30, "shop.tasks.send_mail", Idempotency.NEEDS_KEY, "fp-mail"),
            site("shop/api.py", 5, "shop.tasks.send_mail", Idempotency.NEEDS_KEY, "fp-mail-2"),
            site("shop/views.py", 44, "shop.tasks.thumbnail", Idempotency.IDEMPOTENT, "fp-thumb"),
        ],
        jobs=[
            job(
                "shop.tasks.refund",
                Idempotency.UNSAFE,
                "calls stripe.Refund.create | payment",
                ["shop.tasks.refund", "shop.billing.pay"],
            ),
            job(
                "shop.tasks.send_mail",
                Idempotency.NEEDS_KEY,
                "sends email",
                ["shop.tasks.send_mail"],
            ),
            job("shop.tasks.thumbnail", Idempotency.IDEMPOTENT, "overwrites one file", []),
        ],
        errors=[
            ScanError(
                path="shop/broken.py", reason="invalid syntax (line 3)", kind=ScanErrorKind.SYNTAX
            )
        ],
    )
