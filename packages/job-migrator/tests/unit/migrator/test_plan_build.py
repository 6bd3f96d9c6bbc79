"""build_plan: each verdict in its phase, least risky first, with the right steps."""

from __future__ import annotations

from inventory.models import Confidence, Idempotency, Pattern
from migrator.plan import (
    SIGNOFF_BLANK,
    ItemState,
    PhaseId,
    PlanConfig,
    Verification,
    build_plan,
    key_source,
)
from migrator.plan.build import NOT_CHECKED
from tests.unit.migrator.plan_builders import inventory, keyed_payment, make_job, make_site

IDEM, K, N, U, X = (
    Idempotency.IDEMPOTENT,
    Idempotency.NEEDS_KEY,
    Idempotency.NON_IDEMPOTENT,
    Idempotency.UNSAFE,
    Idempotency.UNKNOWN,
)


def one_of_each():
    jobs = [
        make_job("app.thumb", IDEM),
        make_job("app.capture", K, effects=[keyed_payment("capture-{order_id}")]),
        make_job("app.mail", N, suggested_key="app.mail:{order_id}"),
        make_job("app.refund", U, parameters=["order_id", "amount"]),
        make_job("app.hook", X, Confidence.LOW, reason="effects hidden behind HOOKS[e](p)"),
    ]
    sites = [make_site(j.qualname, 10 + n) for n, j in enumerate(jobs)]
    return inventory(jobs, sites)


def test_each_verdict_lands_in_its_phase() -> None:
    plan = build_plan(one_of_each())
    assert plan.phase(PhaseId.IDEMPOTENT).jobs() == ["app.thumb"]
    assert plan.phase(PhaseId.NEEDS_KEY).jobs() == ["app.capture"]
    assert plan.phase(PhaseId.NON_IDEMPOTENT).jobs() == ["app.mail"]
    assert plan.phase(PhaseId.UNSAFE).jobs() == ["app.refund"]
    assert plan.phase(PhaseId.UNKNOWN).jobs() == ["app.hook"]
    assert plan.moving_jobs() == ["app.thumb", "app.capture"]
    assert [p.id for p in plan.phases] == list(PhaseId)


def test_prerequisites_are_live_and_unchecked_until_checked() -> None:
    plan = build_plan(one_of_each())
    ids = [i.id for i in plan.prerequisites()]
    assert ids == [
        "prereq/schema",
        "prereq/leases",
        "prereq/retry",
        "prereq/dlq",
        "prereq/metrics",
        "prereq/runbooks",
        "prereq/pools",
    ]
    for item in plan.prerequisites():
        assert item.verification is Verification.LIVE
        assert item.state is ItemState.UNTICKED
        assert "--check" in item.evidence
    assert not plan.prerequisites_pass


def test_idempotent_jobs_are_ordered_least_risky_first() -> None:
    jobs = [
        make_job("app.many_sites", IDEM),
        make_job("app.low", IDEM, Confidence.LOW),
        make_job("app.used", IDEM),
        make_job("app.best", IDEM),
        make_job("app.medium", IDEM, Confidence.MEDIUM),
    ]
    sites = [
        make_site("app.many_sites", 1),
        make_site("app.many_sites", 2),
        make_site("app.low", 3),
        make_site("app.used", 4, result_used=True),
        make_site("app.best", 5),
        make_site("app.medium", 6),
    ]
    phase = build_plan(inventory(jobs, sites)).phase(PhaseId.IDEMPOTENT)
    assert phase.jobs() == ["app.best", "app.used", "app.medium", "app.low", "app.many_sites"]


def test_an_idempotent_item_points_at_apply_and_lists_its_sites() -> None:
    jobs = [make_job("app.thumb", IDEM)]
    sites = [make_site("app.thumb", 3), make_site("app.thumb", 9, result_used=True)]
    (item,) = build_plan(inventory(jobs, sites)).phase(PhaseId.IDEMPOTENT).items
    assert item.id == "app.thumb/apply"
    assert item.command == "migrator apply --job app.thumb"
    assert item.verification is Verification.MANUAL
    assert "2 sites" in item.title
    assert any("app/views.py:3" in d for d in item.details)
    assert any("app/views.py:9" in d and "result used (lines 10)" in d for d in item.details)


def test_needs_key_job_declares_the_key_from_its_evidence_then_applies() -> None:
    plan = build_plan(one_of_each())
    (group,) = plan.phase(PhaseId.NEEDS_KEY).groups
    key, apply = group.items
    assert key.id == "app.capture/key"
    assert "`capture-{order_id}`" in key.title
    assert "app/pay.py:7" in key.evidence
    assert key.state is ItemState.UNTICKED
    assert apply.command == "migrator apply --job app.capture --key app.capture=capture-{order_id}"


def test_a_declared_key_ticks_the_key_item_and_simplifies_apply() -> None:
    config = PlanConfig(keys={"app.capture": "cap-{order_id}"})
    (group,) = build_plan(one_of_each(), config).phase(PhaseId.NEEDS_KEY).groups
    key, apply = group.items
    assert key.state is ItemState.TICKED
    assert key.verification is Verification.CONFIG
    assert "`cap-{order_id}`" in key.title
    assert apply.command == "migrator apply --job app.capture"


def test_non_idempotent_steps_are_key_apply_guard_loadtest_rollout_and_gated_ones_live() -> None:
    (group,) = build_plan(one_of_each()).phase(PhaseId.NON_IDEMPOTENT).groups
    steps = [i.id.split("/")[1] for i in group.items]
    assert steps == ["key", "apply", "guard", "loadtest", "rollout"]
    assert "app.mail:{order_id}" in group.items[0].title
    assert (
        group.items[1].command == "migrator apply --job app.mail --key app.mail=app.mail:{order_id}"
    )
    assert "execution guard" in group.items[1].title
    for item in group.items[2:]:  # checked live against the gate's tables by --check
        assert item.state is ItemState.UNTICKED
        assert item.verification is Verification.LIVE
        assert item.evidence == NOT_CHECKED
    assert "migrator loadtest app.mail" in (group.items[3].command or "")


def test_unsafe_jobs_add_a_named_sign_off_before_the_move() -> None:
    (group,) = build_plan(one_of_each()).phase(PhaseId.UNSAFE).groups
    steps = [i.id.split("/")[1] for i in group.items]
    assert steps == ["key", "signoff", "apply", "guard", "loadtest", "rollout"]
    signoff = group.items[1]
    assert signoff.title == SIGNOFF_BLANK == "Sign-off: ____ (name, date)"
    assert signoff.verification is Verification.SIGNOFF
    assert signoff.state is ItemState.UNTICKED


def test_unknown_jobs_and_unresolved_sites_say_what_is_missing() -> None:
    inv = one_of_each()
    dynamic = make_site("unknown", 40)
    dynamic.pattern = Pattern.THREAD
    dynamic.unresolved_reason = "target is a parameter"
    dynamic.target_source = "hook"
    inv.sites.append(dynamic)
    phase = build_plan(inv).phase(PhaseId.UNKNOWN)
    verdict, site = phase.items
    assert verdict.id == "app.hook/verdict"
    assert "missing: effects hidden behind HOOKS[e](p)" in verdict.details
    assert site.id == "site/fp-unknown-40"
    assert site.details == ["missing: target is a parameter"]
    assert "`hook`" in site.title


def test_key_source_order() -> None:
    keyed = make_job("a.capture", K, effects=[keyed_payment("capture-{order_id}")])
    assert key_source(keyed)[0] == "capture-{order_id}"
    assert key_source(keyed, "declared-{order_id}") == ("declared-{order_id}", "the declaration")
    foreign = make_job("a.capture", K, effects=[keyed_payment("capture-{other}")])
    assert key_source(foreign)[0] == "a.capture:{order_id}"  # placeholder not a parameter
    suggested = make_job("a.mail", N, suggested_key="a.mail:{user_id}")
    assert key_source(suggested)[0] == "a.mail:{user_id}"
    plain = make_job("a.audit", N, parameters=["event", "order_id"])
    # Issue 12: {order_id} alone merged two different audit events of one order.
    assert key_source(plain)[0] == "a.audit:{*}"
    no_ids = make_job("a.count", N, parameters=["self", "path"])
    assert key_source(no_ids)[0] == "a.count:{path}"
