"""In-process plumbing is no effect: the calls the whole census found blocking the most
verdicts (``setattr``, ``Logger.log``, an asyncio task's ``done()``, pydantic validation,
scratch files; bench/census/results/whole-census-14d19ba-2026-12-02.md). The same method
names on receivers that are not that plumbing stay gaps."""

from __future__ import annotations

import textwrap
from pathlib import Path

from inventory import scan

JOBS = """
import asyncio
import logging
import tempfile
import threading

from pydantic import BaseModel

_LOGGER = logging.getLogger(__name__)
_TASKS = {}


class Rates(BaseModel):
    eur: float


def refresh(doc, level, name):
    rates = Rates.model_validate(doc)
    settings = type("S", (), {})()
    setattr(settings, name, rates.eur)
    _LOGGER.log(level, "refreshed %s", name)
    task = _TASKS.get(name)
    if task is not None and task.done():
        _TASKS.pop(name)
    with tempfile.NamedTemporaryFile() as scratch:
        scratch.name
    return settings


def tracked(run, metrics):
    run.log(metrics)          # an experiment tracker's log: not a Logger
    return metrics


def view(request):
    threading.Thread(target=refresh, args=({}, 20, "eur")).start()
    threading.Thread(target=tracked, args=(request.run, {})).start()
"""


def _jobs(tmp_path: Path) -> dict[str, object]:
    for rel, text in {"app/__init__.py": "", "app/jobs.py": JOBS}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return {j.qualname: j for j in scan(tmp_path, use_cache=False, jobs=1).jobs}


def test_plumbing_calls_leave_no_gap_and_the_job_is_idempotent(tmp_path: Path) -> None:
    job = _jobs(tmp_path)["app.jobs.refresh"]
    messages = [e.message for e in job.evidence]  # type: ignore[attr-defined]
    for name in ("setattr", "_LOGGER.log", "task.done", "model_validate", "NamedTemporaryFile"):
        assert not any(name in m and "could not" in m for m in messages), messages
    assert job.idempotency.value == "idempotent", messages  # type: ignore[attr-defined]


def test_a_log_method_of_something_that_is_not_a_logger_stays_a_gap(tmp_path: Path) -> None:
    job = _jobs(tmp_path)["app.jobs.tracked"]
    assert job.idempotency.value == "unknown"  # type: ignore[attr-defined]
    assert any("run.log" in e.message for e in job.evidence)  # type: ignore[attr-defined]
