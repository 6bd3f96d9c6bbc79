"""The notification fast track and declared keys in the plan (issue 6)."""

from __future__ import annotations

from pathlib import Path

from inventory.models import Idempotency
from migrator.plan import PLAN_JSON, ItemState, PhaseId, Plan, PlanConfig, build_plan, run_plan
from migrator.plan.build import phase_of
from tests.unit.migrator.plan_builders import inventory, make_job, make_site

K, N, U = Idempotency.NEEDS_KEY, Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE


def mail_job(verdict: Idempotency = N, **changes: object):
    job = make_job(
        "app.welcome", verdict, parameters=["user_id"], suggested_key="app.welcome:{user_id}"
    )
    return job.model_copy(update={"fast_track": True, **changes})


def test_a_fast_track_job_goes_to_phase_2_with_apply_and_the_gated_steps() -> None:
    plan = build_plan(inventory([mail_job()], [make_site("app.welcome", 3)]))
    assert not plan.phase(PhaseId.NON_IDEMPOTENT).groups
    (group,) = plan.phase(PhaseId.NEEDS_KEY).groups
    steps = [i.id.split("/")[1] for i in group.items]
    assert steps == ["key", "apply", "guard", "loadtest", "rollout"]
    assert "`app.welcome:{user_id}`" in group.items[0].title
    apply = group.items[1]
    assert (
        apply.command == "migrator apply --job app.welcome --key app.welcome=app.welcome:{user_id}"
    )
    assert any("notification fast track" in d for d in group.details)


def test_a_declared_key_on_a_fast_track_job_ticks_the_key_and_keeps_phase_2() -> None:
    job = mail_job(K, declared_key="welcome:{user_id}", keyless_idempotency=N)
    config = PlanConfig(keys={"app.welcome": "welcome:{user_id}"})
    plan = build_plan(inventory([job], [make_site("app.welcome", 3)]), config)
    (group,) = plan.phase(PhaseId.NEEDS_KEY).groups
    key, apply = group.items[:2]
    assert key.state is ItemState.TICKED and "`welcome:{user_id}`" in key.title
    assert apply.command == "migrator apply --job app.welcome"
    assert "loadtest" in [i.id.split("/")[1] for i in group.items]


def test_a_declared_key_over_a_non_idempotent_job_that_is_not_a_notification_stays_in_phase_3() -> (
    None
):
    job = make_job("app.audit", K).model_copy(update={"keyless_idempotency": N})
    assert phase_of(job) is PhaseId.NON_IDEMPOTENT
    plan = build_plan(
        inventory([job], [make_site("app.audit", 3)]),
        PlanConfig(keys={"app.audit": "a:{order_id}"}),
    )
    (group,) = plan.phase(PhaseId.NON_IDEMPOTENT).groups
    assert [i.id.split("/")[1] for i in group.items][:3] == ["key", "apply", "guard"]


def test_a_plain_needs_key_job_stays_phase_2_with_key_and_apply_only() -> None:
    job = make_job("app.capture", K)
    assert phase_of(job) is PhaseId.NEEDS_KEY
    (group,) = (
        build_plan(inventory([job], [make_site("app.capture", 3)])).phase(PhaseId.NEEDS_KEY).groups
    )
    assert [i.id.split("/")[1] for i in group.items] == ["key", "apply"]


def test_unsafe_is_never_fast_tracked_and_signs_off_before_the_move() -> None:
    job = make_job("app.refund", U).model_copy(update={"fast_track": True})
    assert phase_of(job) is PhaseId.UNSAFE
    (group,) = (
        build_plan(inventory([job], [make_site("app.refund", 3)])).phase(PhaseId.UNSAFE).groups
    )
    assert [i.id.split("/")[1] for i in group.items][:3] == ["key", "signoff", "apply"]


def test_the_plan_json_gives_scripts_each_fast_track_apply_step_and_its_key(
    tmp_path: Path,
) -> None:
    (tmp_path / ".migrator").mkdir()
    found = inventory([mail_job()], [make_site("app.welcome", 3)])
    (tmp_path / ".migrator" / "inventory.json").write_text(found.model_dump_json())

    run_plan(tmp_path)

    plan = Plan.model_validate_json((tmp_path / PLAN_JSON).read_text())
    (group,) = plan.phase(PhaseId.NEEDS_KEY).groups
    apply = next(i for i in group.items if i.id == "app.welcome/apply")
    assert group.fast_track and apply.key == "app.welcome:{user_id}"
    assert apply.command is not None and apply.command.endswith(f"app.welcome={apply.key}")


def test_a_declared_key_is_the_apply_steps_key_and_a_job_without_input_has_none() -> None:
    job = mail_job(K, declared_key="welcome:{user_id}", keyless_idempotency=N)
    config = PlanConfig(keys={"app.welcome": "welcome:{user_id}"})
    (group,) = (
        build_plan(inventory([job], [make_site("app.welcome", 3)]), config)
        .phase(PhaseId.NEEDS_KEY)
        .groups
    )
    assert group.items[1].key == "welcome:{user_id}"
    bare = mail_job(parameters=[], suggested_key=None)
    (group,) = (
        build_plan(inventory([bare], [make_site("app.welcome", 3)])).phase(PhaseId.NEEDS_KEY).groups
    )
    assert next(i for i in group.items if i.id.endswith("/apply")).key is None


def _django_mail_site(job: str, line: int):  # type: ignore[no-untyped-def]
    from inventory.models import Pattern

    return make_site(job, line).model_copy(
        update={
            "pattern": Pattern.DIRECT_CALL,
            "target_source": "django.core.mail.send_mail",
            "enclosing_function": job,
        }
    )


def test_a_job_whose_sites_are_django_mail_calls_moves_its_delivery_with_no_key() -> None:
    """The job (it takes a request) stays in the request; its mail calls hand the built
    message to queue_runtime.django_mail, keyed by Message-ID: no key to declare, and the
    load test and rollout are those of the delivery job."""
    plan = build_plan(inventory([mail_job()], [_django_mail_site("app.welcome", 3)]))
    (group,) = plan.phase(PhaseId.NEEDS_KEY).groups
    assert [i.id.split("/")[1] for i in group.items] == ["apply", "loadtest", "rollout"]
    apply, loadtest, rollout = group.items
    assert apply.command == "migrator apply --job app.welcome" and apply.key is None
    deliver = "queue_runtime.django_mail.deliver"
    assert loadtest.job == rollout.job == deliver
    assert loadtest.command is not None and loadtest.command.startswith(
        f"migrator loadtest {deliver}"
    )
    assert rollout.command == f"migrator rollout set {deliver} 25%"
    assert any("Django mail" in d and "Message-ID" in d for d in group.details)


def test_a_job_with_one_other_site_keeps_its_key_and_guard() -> None:
    sites = [_django_mail_site("app.welcome", 3), make_site("app.welcome", 9)]
    (group,) = build_plan(inventory([mail_job()], sites)).phase(PhaseId.NEEDS_KEY).groups
    assert [i.id.split("/")[1] for i in group.items] == [
        "key",
        "apply",
        "guard",
        "loadtest",
        "rollout",
    ]
