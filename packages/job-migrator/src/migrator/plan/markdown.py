"""``MIGRATION_PLAN.md``: render a :class:`Plan`, keeping what a human wrote in the previous file.

The format (see docs/plan.md): every line the tool writes ends in an HTML
comment ``<!-- plan:ID -->`` (an *anchor*: the title, a phase heading, a job
heading, an item ``- [x] text <!-- plan:ID -->``) or ``<!-- plan:ID:kind -->``
(a generated line that belongs to anchor ID: an intro, evidence, a command, a
site). Every other line is a human note and belongs to the anchor above it.

A re-run regenerates the tagged lines and puts each anchor's notes back under
it, wherever the anchor moved. Kept from the previous file as well: ticks of
manual items, the text of sign-off lines, and the state and evidence of live
items this run did not check. Anchors that disappeared but had notes (or a
filled-in sign-off) go to "Removed since last plan" with their old line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrator.plan.model import (
    NOT_BUILT,
    ItemState,
    JobGroup,
    Phase,
    Plan,
    PlanItem,
    Verification,
)

TOP = ""  # the anchor of notes written above the title
REMOVED = "removed"
BLANK_MARK = "____"

_MARK = re.compile(r"\s*<!-- plan:(?P<id>[^\s:]+)(?::(?P<kind>[a-z]+))? -->\s*$")
_ITEM = re.compile(r"^\s*[-*] \[(?P<box>[ xX])\] ?(?P<text>.*)$")
_EVIDENCE = re.compile(r"^\s*- evidence: (?P<text>.*)$")


@dataclass
class PreviousItem:
    checked: bool
    text: str
    line: str


@dataclass
class Previous:
    """What a previous MIGRATION_PLAN.md holds that the tool must not lose."""

    order: list[str] = field(default_factory=list)  # anchors, in file order
    lines: dict[str, str] = field(default_factory=dict)  # anchor -> its line as written
    notes: dict[str, list[str]] = field(default_factory=dict)
    items: dict[str, PreviousItem] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)

    def notes_of(self, anchor: str) -> list[str]:
        return self.notes.get(anchor, [])


def parse_markdown(text: str) -> Previous:
    prev = Previous()
    current = TOP
    notes: dict[str, list[str]] = {TOP: []}
    for line in text.splitlines():
        mark = _MARK.search(line)
        if mark is None:
            notes.setdefault(current, []).append(line)
            continue
        anchor, kind, body = mark["id"], mark["kind"], line[: mark.start()]
        if kind == "evidence":
            found = _EVIDENCE.match(body)
            if found:
                prev.evidence[anchor] = found["text"].strip()
            continue
        if kind is not None:
            continue
        current = anchor
        if anchor not in prev.lines:
            prev.order.append(anchor)
        prev.lines[anchor] = line
        notes.setdefault(anchor, [])
        item = _ITEM.match(body)
        if item:
            prev.items[anchor] = PreviousItem(item["box"] != " ", item["text"].strip(), line)
    prev.notes = {a: _trimmed(n) for a, n in notes.items() if _trimmed(n)}
    return prev


def _trimmed(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return [line.rstrip() for line in lines[start:end]]


def merge_previous(plan: Plan, previous_text: str) -> Plan:
    """``plan`` with what the previous file knew: manual ticks, sign-offs, unchecked live states."""
    prev = parse_markdown(previous_text)
    merged = plan.model_copy(deep=True)
    for item in merged.items():
        old = prev.items.get(item.id)
        if old is None:
            continue
        if item.verification is Verification.MANUAL and old.checked:
            item.state = ItemState.TICKED
            item.evidence = "ticked by hand"
        elif item.verification is Verification.SIGNOFF:
            item.title = old.text or item.title
            item.state = ItemState.TICKED if _signed(item.title) else ItemState.UNTICKED
        elif item.verification is Verification.LIVE and not item.verified:
            # Only a tick a check wrote (its evidence says "checked ...") is kept: a live
            # item ticked by hand (a certification, a rollout) stays unticked until --check.
            evidence = prev.evidence.get(item.id, item.evidence)
            by_check = old.checked and evidence.startswith("checked ")
            item.state = ItemState.TICKED if by_check else ItemState.UNTICKED
            item.evidence = evidence
    return merged


def _signed(text: str) -> bool:
    return BLANK_MARK not in text and bool(text.strip())


_SIGNOFF = re.compile(r"^Sign-off:\s*(?P<who>[^,]*\S)\s*,\s*(?P<when>\S.*)$")


def recorded_signoffs(text: str) -> dict[str, str]:
    """Job -> its sign-off line, for each phase-4 ``<job>/signoff`` item filled in by a human.

    Filled in means ``Sign-off: <name>, <date>`` with both parts written (the
    blank ``Sign-off: ____ (name, date)`` and a line without a date do not count).
    """
    found: dict[str, str] = {}
    for anchor, item in parse_markdown(text).items.items():
        job, _, step = anchor.rpartition("/")
        match = _SIGNOFF.match(item.text)
        if step == "signoff" and job and match and _signed(item.text):
            found[job] = item.text
    return found


class _Writer:
    def __init__(self, prev: Previous) -> None:
        self.prev = prev
        self.out: list[str] = []
        self.anchors: list[str] = []

    def blank(self) -> None:
        if self.out and self.out[-1] != "":
            self.out.append("")

    def anchor(
        self,
        anchor: str,
        line: str,
        generated: Sequence[tuple[str, str]] = (),
        notes: bool = True,
    ) -> None:
        """The anchor's line, its generated lines ``(kind, text)``, then its notes."""
        self.anchors.append(anchor)
        self.out.append(f"{line} <!-- plan:{anchor} -->")
        self.out += [f"{text} <!-- plan:{anchor}:{kind} -->" for kind, text in generated]
        if notes:
            self.out += self.prev.notes_of(anchor)


def render_markdown(plan: Plan, previous_text: str = "") -> str:
    """The Markdown of ``plan``, with the notes and sign-offs of ``previous_text`` kept."""
    prev = parse_markdown(previous_text)
    plan = merge_previous(plan, previous_text)
    w = _Writer(prev)
    w.out += prev.notes_of(TOP)
    w.blank()
    w.anchor("title", "# Migration plan")
    w.blank()
    w.anchor(
        "about",
        f"Generated by `migrator plan` from `.migrator/inventory.json` ({plan.inventory_summary}). "
        "Lines ending in a `plan:` comment are rewritten on every run; write your notes on "
        "lines of their own under an item or a phase, and sign-offs on their line: both are "
        "kept. `migrator plan --check` ticks what is verifiably in place.",
    )
    for phase in plan.phases:
        _phase(w, phase)
    _preview(w, plan)
    _removed(w, prev)
    while w.out and w.out[-1] == "":
        w.out.pop()
    return "\n".join(w.out) + "\n"


def _phase(w: _Writer, phase: Phase) -> None:
    w.blank()
    w.anchor(phase.id.value, f"## {phase.title}", notes=False)
    w.blank()
    w.out.append(f"{phase.intro} <!-- plan:{phase.id.value}:intro -->")
    if w.prev.notes_of(phase.id.value):
        w.blank()
        w.out += w.prev.notes_of(phase.id.value)
    w.blank()
    if not phase.items and not phase.groups:
        w.out.append(f"No jobs in this phase. <!-- plan:{phase.id.value}:empty -->")
    for item in phase.items:
        _item(w, item)
    for group in phase.groups:
        _group(w, group)


def _group(w: _Writer, group: JobGroup) -> None:
    w.blank()
    w.anchor(f"job/{group.job}", f"### {group.header}", [("detail", d) for d in group.details])
    w.blank()
    for item in group.items:
        _item(w, item)


def item_line(item: PlanItem) -> str:
    box = "x" if item.ticked else " "
    text = item.title
    if item.state is ItemState.NOT_CHECKABLE:
        text += f" — {NOT_BUILT}"
    return f"- [{box}] {text}"


def _item(w: _Writer, item: PlanItem) -> None:
    generated = [("detail", f"  - {d}") for d in item.details]
    if item.evidence and item.state is not ItemState.NOT_CHECKABLE:
        generated.append(("evidence", f"  - evidence: {item.evidence}"))
    if item.command:
        generated.append(("run", f"  - run: `{item.command}`"))
    w.anchor(item.id, item_line(item), generated)


PREVIEW = "apply-preview"


def _preview(w: _Writer, plan: Plan) -> None:
    """apply's dry run, site by site: what it will do and why (no checkboxes: regenerated)."""
    if not plan.apply_preview and not plan.apply_preview_error:
        return
    w.blank()
    w.anchor(PREVIEW, "## What `migrator apply` will do, site by site", notes=False)
    w.blank()
    w.out.append(
        "Its own dry run over this inventory, with its defaults: `migrator apply` shows the "
        f"diff, `--write` makes it. <!-- plan:{PREVIEW}:intro -->"
    )
    if w.prev.notes_of(PREVIEW):
        w.blank()
        w.out += w.prev.notes_of(PREVIEW)
    w.blank()
    if plan.apply_preview_error:
        w.out.append(f"{plan.apply_preview_error} <!-- plan:{PREVIEW}:error -->")
    for site in plan.apply_preview:
        why = f": {site.why}" if site.why else ""
        line = f"- `{site.site}` {site.pattern}, `{site.job}`: **{site.outcome}**{why}"
        w.out.append(f"{line} <!-- plan:{PREVIEW}:site -->")


def _removed(w: _Writer, prev: Previous) -> None:
    current = set(w.anchors)
    gone = [
        a
        for a in prev.order
        if a not in current and a != REMOVED and (prev.notes_of(a) or _kept_signoff(prev, a))
    ]
    if not gone and not prev.notes_of(REMOVED):
        return
    w.blank()
    w.anchor(REMOVED, "## Removed since last plan", notes=False)
    w.blank()
    w.out.append(
        "No longer in the plan (the job moved step, was renamed or is gone), kept for their "
        f"notes; delete them when done. <!-- plan:{REMOVED}:intro -->"
    )
    if prev.notes_of(REMOVED):
        w.blank()
        w.out += prev.notes_of(REMOVED)
    w.blank()
    for anchor in gone:
        w.anchors.append(anchor)
        w.out.append(prev.lines[anchor].rstrip())
        w.out += prev.notes_of(anchor)


def _kept_signoff(prev: Previous, anchor: str) -> bool:
    item = prev.items.get(anchor)
    return item is not None and anchor.endswith("/signoff") and _signed(item.text)
