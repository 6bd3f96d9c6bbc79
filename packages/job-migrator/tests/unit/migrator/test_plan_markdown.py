"""MIGRATION_PLAN.md: the format, and a re-run keeping notes, ticks and sign-offs."""

from __future__ import annotations

import re

from inventory.models import Idempotency
from migrator.plan import (
    ItemState,
    PhaseId,
    Plan,
    PlanConfig,
    build_plan,
    merge_previous,
    parse_markdown,
    render_markdown,
)
from tests.unit.migrator.plan_builders import inventory, make_job, make_site

IDEM, N, U = Idempotency.IDEMPOTENT, Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE


def shop_plan(*extra: str) -> Plan:
    names = {"app.thumb": IDEM, "app.mail": N, "app.refund": U, **dict.fromkeys(extra, IDEM)}
    jobs = [make_job(name, verdict) for name, verdict in names.items()]
    sites = [make_site(name, 10 + n) for n, name in enumerate(names)]
    return build_plan(inventory(jobs, sites), PlanConfig())


def insert_after(text: str, marker: str, *lines: str) -> str:
    """Insert ``lines`` after the last generated line of the block that starts at ``marker``."""
    out = text.splitlines()
    start = next(n for n, line in enumerate(out) if line.endswith(f"<!-- plan:{marker} -->"))
    end = start + 1
    while end < len(out) and f"<!-- plan:{marker}:" in out[end]:
        end += 1
    return "\n".join([*out[:end], *lines, *out[end:]]) + "\n"


def test_every_item_is_a_checkbox_line_with_its_id() -> None:
    plan = shop_plan()
    text = render_markdown(plan)
    for item in plan.items():
        pattern = rf"^- \[[ x]\] .+ <!-- plan:{re.escape(item.id)} -->$"
        assert re.search(pattern, text, re.M), item.id
    assert "- [ ] Sign-off: ____ (name, date) <!-- plan:app.refund/signoff -->" in text
    assert (
        "- [ ] Certify it with a load test (with chaos) for its current code <!-- plan:app.mail/loadtest -->"
        in text
    )
    assert "not checkable yet" not in text  # the gate is built: --check verifies its steps
    for phase in ("Phase 0: prerequisites", "Phase 1: idempotent jobs", "Unknown: no verdict yet"):
        assert f"## {phase}" in text
    assert "No jobs in this phase." in text  # phase 2 and unknown are empty here


def test_rendering_is_a_fixed_point() -> None:
    plan = shop_plan()
    once = render_markdown(plan)
    assert render_markdown(plan, once) == once
    assert render_markdown(plan, render_markdown(plan, once)) == once


def test_notes_under_items_and_phases_survive_a_rerun() -> None:
    plan = shop_plan()
    text = render_markdown(plan)
    text = insert_after(text, "app.thumb/apply", "  Ana: ship on Tuesday, after the deploy freeze.")
    text = insert_after(
        text, "phase-3:intro", "", "We do phase 3 in January.", "", "Second paragraph."
    )
    text = "Team notes at the very top.\n\n" + text
    again = render_markdown(plan, text)
    assert again == text  # nothing moved, nothing lost
    assert "  Ana: ship on Tuesday, after the deploy freeze." in again
    assert "We do phase 3 in January.\n\nSecond paragraph." in again
    assert again.startswith("Team notes at the very top.\n")


def test_notes_follow_their_item_when_the_plan_changes_around_them() -> None:
    text = insert_after(render_markdown(shop_plan()), "app.thumb/apply", "  note on thumb")
    bigger = render_markdown(shop_plan("app.a_first", "app.z_last"), text)
    lines = bigger.splitlines()
    at = next(n for n, line in enumerate(lines) if "<!-- plan:app.thumb/apply -->" in line)
    following = [line for line in lines[at + 1 :] if "<!-- plan:app.thumb/apply:" not in line]
    assert following[0] == "  note on thumb"
    assert "<!-- plan:app.a_first/apply -->" in bigger


def test_sign_offs_and_manual_ticks_are_kept() -> None:
    plan = shop_plan()
    text = render_markdown(plan)
    text = text.replace(
        "- [ ] Sign-off: ____ (name, date) <!-- plan:app.refund/signoff -->",
        "- [ ] Sign-off: Ana Lopez, 2026-12-01 <!-- plan:app.refund/signoff -->",
    )
    text = text.replace("- [ ] Move `app.thumb`", "- [x] Move `app.thumb`")
    merged = merge_previous(plan, text)
    signoff = merged.item("app.refund/signoff")
    assert signoff is not None and signoff.title == "Sign-off: Ana Lopez, 2026-12-01"
    assert signoff.state is ItemState.TICKED  # filled in = signed
    thumb = merged.item("app.thumb/apply")
    assert thumb is not None and thumb.state is ItemState.TICKED
    again = render_markdown(plan, text)
    assert "- [x] Sign-off: Ana Lopez, 2026-12-01 <!-- plan:app.refund/signoff -->" in again
    assert "- [x] Move `app.thumb`" in again


def test_gated_items_stay_unticked_even_if_ticked_by_hand() -> None:
    plan = shop_plan()
    text = render_markdown(plan)
    ticked = text.replace("- [ ] Certify it with a load test", "- [x] Certify it with a load test")
    assert "- [x] Certify" not in render_markdown(plan, ticked)


def test_live_items_keep_their_last_checked_state_when_not_checked_again() -> None:
    plan = shop_plan()
    text = render_markdown(plan).replace(
        "- [ ] Runtime schema migrated", "- [x] Runtime schema migrated"
    )
    text = text.replace(
        "  - evidence: not checked yet: run `migrator plan --check` <!-- plan:prereq/schema:evidence -->",
        "  - evidence: checked 2026-11-29 12:00 UTC: at head <!-- plan:prereq/schema:evidence -->",
    )
    merged = merge_previous(plan, text)
    schema = merged.item("prereq/schema")
    assert schema is not None and schema.state is ItemState.TICKED
    assert schema.evidence == "checked 2026-11-29 12:00 UTC: at head"
    # ...but a fresh check wins over the file.
    fresh = plan.model_copy(deep=True)
    item = fresh.item("prereq/schema")
    assert item is not None
    item.verified, item.evidence = True, "checked now: not migrated"
    out = render_markdown(fresh, text)
    assert "- [ ] Runtime schema migrated" in out and "checked now: not migrated" in out


def test_removed_items_with_notes_move_to_their_own_section() -> None:
    plan = shop_plan("app.gone", "app.silent")
    text = render_markdown(plan)
    text = insert_after(text, "app.gone/apply", "  why we waited: the CDN")
    text = text.replace("- [ ] Move `app.gone`", "- [x] Move `app.gone`")
    smaller = shop_plan()
    out = render_markdown(smaller, text)
    removed = out.split("## Removed since last plan", 1)[1]
    assert "- [x] Move `app.gone`" in removed and "<!-- plan:app.gone/apply -->" in removed
    assert "  why we waited: the CDN" in removed
    assert "app.silent" not in out  # no notes: simply gone
    assert render_markdown(smaller, out) == out  # stays there, once
    # The job comes back: its notes go back under it, the section disappears.
    back = render_markdown(shop_plan("app.gone"), out)
    assert "## Removed since last plan" not in back
    assert "  why we waited: the CDN" in back


def test_a_filled_in_sign_off_is_kept_even_when_its_job_disappears() -> None:
    plan = shop_plan()
    text = render_markdown(plan).replace("Sign-off: ____ (name, date)", "Sign-off: Bo, 2026-12-02")
    jobs = [make_job("app.thumb", IDEM)]
    out = render_markdown(build_plan(inventory(jobs, [make_site("app.thumb", 1)])), text)
    assert "Sign-off: Bo, 2026-12-02 <!-- plan:app.refund/signoff -->" in out.split("## Removed")[1]


def test_parse_reads_items_notes_and_evidence() -> None:
    text = insert_after(render_markdown(shop_plan()), "app.mail/key", "  keyed by order id")
    prev = parse_markdown(text)
    assert prev.notes["app.mail/key"] == ["  keyed by order id"]
    assert prev.items["app.thumb/apply"].checked is False
    assert prev.evidence["prereq/schema"].startswith("not checked yet")
    assert prev.order[:3] == ["title", "about", PhaseId.PREREQUISITES.value]
