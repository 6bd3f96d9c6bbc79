"""A catalogued call is never listed as an unresolved call, and ``open`` is read by its mode.

The census found ``time.time``, ``asyncio.sleep`` and ``cache.delete`` in jobs' lists of
"unresolved calls (not in the catalogue)": they were effects behind a call guessed by
method name, listed by their own API instead of by the guessed call. And a plain
``open(path)`` blocked 176 verdicts: the catalogue only had the write and append modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, scan
from inventory.models import EffectKind, Job

_GUESSED = {
    "app/__init__.py": "",
    "app/models.py": """\
import asyncio
import time


class Feed:
    def refresh(self):
        self.stamp = time.time()


class Probe:
    async def refresh(self):
        await asyncio.sleep(1)
""",
    "app/views.py": """\
import threading


def refresh_all(items):
    for item in items:
        item.refresh()


def view(request):
    threading.Thread(target=refresh_all, args=(request.items,)).start()
""",
}


def _scan(tmp_path: Path, files: dict[str, str]) -> Inventory:
    for rel, text in files.items():
        (tmp_path / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "app" / rel).write_text(text, encoding="utf-8")
    return scan(tmp_path / "app", use_cache=False, jobs=1)


def _job(inventory: Inventory, qualname: str) -> Job:
    found = inventory.job(qualname)
    assert found is not None, [j.qualname for j in inventory.jobs]
    return found


def _unresolved(job: Job) -> list[str]:
    """The names of the job's "unresolved calls (...): a, b and N more" evidence line."""
    lines = [e.message for e in job.evidence if e.message.startswith("unresolved calls")]
    names = lines[0].split(": ", 1)[1].split(" and ")[0] if lines else ""
    return names.split(", ") if names else []


def test_an_effect_behind_a_guessed_call_is_named_by_that_call(tmp_path: Path) -> None:
    job = _job(_scan(tmp_path, _GUESSED), "app.views.refresh_all")
    assert job.idempotency is Idempotency.UNKNOWN  # which refresh runs is still a guess
    assert _unresolved(job) == ["item.refresh"]
    guessed = [e.message for e in job.evidence if e.message.startswith("may run behind")]
    assert guessed == [
        "may run behind calls guessed by method name or override: "
        "asyncio.sleep (behind app.models.Probe.refresh), "
        "time.time (behind app.models.Feed.refresh)"
    ]


def _reader(body: str) -> dict[str, str]:
    return {
        "app/__init__.py": "",
        "app/views.py": f"""\
import threading


def load(path, mode):
    {body}


def view(request):
    threading.Thread(target=load, args=("/tmp/a", "r")).start()
""",
    }


@pytest.mark.parametrize(
    "body",
    [
        "with open(path) as fh:\n        return fh.read()",
        "with open(path, 'rb') as fh:\n        return fh.read()",
        "with open(path, mode='r', encoding='utf-8') as fh:\n        return fh.read()",
    ],
)
def test_open_in_a_read_mode_is_a_read(tmp_path: Path, body: str) -> None:
    job = _job(_scan(tmp_path, _reader(body)), "app.views.load")
    assert job.idempotency is Idempotency.IDEMPOTENT
    assert "open" not in _unresolved(job)


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("with open(path, 'w') as fh:\n        fh.write('x')", EffectKind.FILE_WRITE),
        ("with open(path, mode='wb') as fh:\n        fh.write(b'x')", EffectKind.FILE_WRITE),
        ("with open(path, 'a') as fh:\n        fh.write('x')", EffectKind.FILE_APPEND),
    ],
)
def test_open_in_a_write_or_append_mode_is_that_effect(
    tmp_path: Path, body: str, kind: EffectKind
) -> None:
    job = _job(_scan(tmp_path, _reader(body)), "app.views.load")
    assert kind in {e.kind for e in job.effects}
    assert "open" not in _unresolved(job)


@pytest.mark.parametrize(
    "body",
    [
        "with open(path, mode) as fh:\n        fh.read()",
        "with open(path, 'r+') as fh:\n        fh.read()",
    ],
)
def test_open_in_a_mode_the_scan_cannot_read_or_read_write_stays_a_gap(
    tmp_path: Path, body: str
) -> None:
    job = _job(_scan(tmp_path, _reader(body)), "app.views.load")
    assert job.idempotency is Idempotency.UNKNOWN
    assert "open" in _unresolved(job)
