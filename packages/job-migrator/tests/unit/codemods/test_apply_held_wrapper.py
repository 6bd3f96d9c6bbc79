"""A held move that writes a wrapper job: each change its outcome offers decides that job.

``Thread(target=somelib.sync, args=(key,))`` moves as a wrapper job written beside the
site (``_sync_from_somelib``); held (``--job somelib.sync``, the scan could not follow
``somelib.sync``), the runtime reads the wrapper's verdict, under the wrapper's name. The
pin the outcome offered named ``somelib.sync``, which after the move is no job at all: the
next scan still called the wrapper ``unknown`` and the gate held it forever. Followed here
with the real scanner, each offered change (the pin, the catalogue entry) decides the job
the runtime runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codemods import ApplyOptions, Status, plan_apply
from inventory import Idempotency, Pattern, scan

VIEWS = """\
import threading

import somelib


def refresh(request, key):
    threading.Thread(target=somelib.sync, args=(key,)).start()
    return "ok"
"""


def _moved_held(root: Path) -> str:
    """Scan, apply ``--job somelib.sync`` (written), and the outcome's reason."""
    (root / "views.py").write_text(VIEWS)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    result = plan_apply(root, inventory, ApplyOptions(jobs=("somelib.sync",)))
    (change,) = result.changes
    (root / "views.py").write_text(change.after)
    (outcome,) = result.outcomes
    assert outcome.status is Status.REWRITTEN and outcome.reason.startswith("held: ")
    return outcome.reason


def _rescanned_job(root: Path, pyproject: str) -> tuple[str, Idempotency]:
    (root / "pyproject.toml").write_text(pyproject)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    (site,) = inventory.sites
    assert site.pattern is Pattern.ENQUEUE
    job = inventory.job(site.job)
    assert job is not None
    return job.qualname, job.idempotency


def test_the_pin_the_outcome_offers_decides_the_wrapper_the_runtime_runs(
    tmp_path: Path,
) -> None:
    reason = _moved_held(tmp_path)
    (pinned,) = re.findall(r'\[tool\.migrator\.jobs\."([^"]+)"\]', reason)
    assert pinned == "views._sync_from_somelib"
    pin = f'[tool.migrator.jobs."{pinned}"]\nidempotency = "idempotent"\nreason = "reviewed"\n'
    assert _rescanned_job(tmp_path, pin) == (pinned, Idempotency.IDEMPOTENT)


@pytest.mark.parametrize("kind", ["pure", "effect"])
def test_the_catalogue_entry_the_outcome_offers_decides_it_too(tmp_path: Path, kind: str) -> None:
    reason = _moved_held(tmp_path)
    assert 'call = "somelib.sync"' in reason
    entry = f'[[tool.migrator.catalogue.{kind}]]\ncall = "somelib.sync"\n'
    if kind == "effect":
        entry += 'effect = "http_post"\n'
    name, verdict = _rescanned_job(tmp_path, entry)
    assert name == "views._sync_from_somelib"
    assert verdict is (Idempotency.IDEMPOTENT if kind == "pure" else Idempotency.NON_IDEMPOTENT)
