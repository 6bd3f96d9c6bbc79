"""A handler calling through a table of functions: reported per slow value, never rewritten.

``ENGINES[name](text)`` (or ``fn = ENGINES.get(name); fn(text)``) runs one value of a
module-level table, chosen at run time. The scan reports a site for each value that does
slow work, at that call; apply cannot enqueue one of them there (the call names none) and
says what to write instead. Written that way, the site moves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory import scan

Files = Callable[[dict[str, str]], Path]

VIEWS = """import requests
from fastapi import APIRouter

router = APIRouter()


def announce_local(text: str) -> None:
    print(text)


def announce_cloud(text: str) -> None:
    requests.put("https://tts.example/announce", json={"text": text})


ENGINES = {"local": announce_local, "cloud": announce_cloud}


@router.post("/announce")
def announce(engine: str, text: str) -> dict:
    ENGINES[engine](text)
    return {"ok": True}
"""


def test_a_call_through_a_table_is_a_site_apply_leaves_with_the_change_to_make(
    write_files: Files,
) -> None:
    root = write_files({"app/__init__.py": "", "app/views.py": VIEWS})
    inventory = scan(root, use_cache=False, write=False)
    [site] = inventory.sites
    assert site.job == "app.views.announce_cloud"
    assert site.location.line == 20

    [outcome] = plan_apply(root, inventory, scanner=None).outcomes

    assert outcome.status is Status.SKIPPED
    assert "call `announce_cloud(...)` by name where the handler picks it" in outcome.reason
    assert (root / "app/views.py").read_text() == VIEWS


def test_the_value_called_by_name_then_moves(write_files: Files) -> None:
    named = VIEWS.replace(
        "    ENGINES[engine](text)\n",
        '    if engine == "cloud":\n        announce_cloud(text)\n    else:\n'
        "        ENGINES[engine](text)\n",
    )
    root = write_files({"app/__init__.py": "", "app/views.py": named})

    outcomes = plan_apply(root, scan(root, use_cache=False, write=False), scanner=None).outcomes

    moved = [o for o in outcomes if o.status is Status.REWRITTEN]
    assert [o.site.job for o in moved] == ["app.views.announce_cloud"]
    assert moved[0].site.location.line == 21
