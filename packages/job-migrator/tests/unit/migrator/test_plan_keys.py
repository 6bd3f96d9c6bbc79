"""Issue 12: the plan's key items: a suggestion that never merges work, declared keys checked."""

from __future__ import annotations

from pathlib import Path

from inventory.models import Idempotency
from migrator.plan import ItemState, PlanConfig, build_plan
from tests.unit.migrator.plan_builders import inventory, make_job, make_site

N = Idempotency.NON_IDEMPOTENT


def key_item(job_params: list[str], declared: str | None = None, root: str = "/srv/app"):  # type: ignore[no-untyped-def]
    job = make_job("app.stock", N, parameters=job_params)
    inv = inventory([job], [make_site("app.stock", 10)])
    inv.root = root
    config = PlanConfig(keys={"app.stock": declared} if declared else {})
    plan = build_plan(inv, config)
    return plan.item("app.stock/key"), plan.item("app.stock/apply"), plan


def test_several_parameters_get_the_digest_and_a_note_on_equal_calls() -> None:
    key, apply, plan = key_item(["product_id", "qty"])
    assert (
        key is not None and key.command == '[tool.migrator.jobs."app.stock"] key = "app.stock:{*}"'
    )
    assert "a digest of every argument" in key.evidence
    assert apply is not None and apply.command is not None
    assert apply.command.endswith("--key app.stock=app.stock:{*}")
    [group] = plan.phase(plan.phases[3].id).groups
    assert any("equal arguments are one unit of work" in d for d in group.details)


def test_a_job_without_input_gets_no_fieldless_key() -> None:
    key, apply, _ = key_item(["self"])
    assert key is not None and key.command is None and key.state is ItemState.UNTICKED
    assert "no key can be suggested" in key.evidence
    assert apply is not None and "--key" not in (apply.command or "")


def test_a_declared_key_that_does_not_fit_stays_unticked_with_what_to_fix(tmp_path: Path) -> None:
    key, _, _ = key_item(["product_id", "qty"], "shop.keys:stock", root=str(tmp_path))
    assert key is not None and key.state is ItemState.UNTICKED
    assert key.title == "Fix the idempotency key `shop.keys:stock`"
    assert "no module shop.keys in the project" in key.evidence
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "keys.py").write_text("def stock(product_id, qty):\n    return ''\n")
    key, _, _ = key_item(["product_id", "qty"], "shop.keys:stock", root=str(tmp_path))
    assert key is not None and key.state is ItemState.TICKED
