"""``typing.cast(Job, x).run()`` runs ``Job.run`` (or an override), never "typing's".

``x = cast(Job, y)`` typed ``x`` already; an inline ``cast(Job, y).run()`` was named
``typing.cast().run``, which the catalogue's ``typing.[a-z_]*`` (typing's own functions are
pure) matched as a glob: a job posting through it was called ``idempotent`` with no
evidence of the post (found probing idioms, stop 50). A cast to what the scan cannot name
(``Any``) is a value of unknown type: a gap, not a pure call."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import threading
import typing
from typing import Any, cast

import requests


class Job:
    def run(self):
        requests.post("https://hooks.example.com/run")


def named(x):
    typing.cast(Job, x).run()


def quoted(x):
    cast("Job", x).run()


def anything(x):
    cast(Any, x).run()


def builtin(payload):
    return cast(dict, payload).get("a")


def view():
    threading.Thread(target=named, args=(1,)).start()
    threading.Thread(target=quoted, args=(1,)).start()
    threading.Thread(target=anything, args=(1,)).start()
    threading.Thread(target=builtin, args=({},)).start()
"""


def test_an_inline_cast_runs_the_declared_class(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    for name in ("app.named", "app.quoted"):
        assert "requests.post" in {e.api for e in jobs[name].effects}, jobs[name].evidence
        assert jobs[name].idempotency is Idempotency.NON_IDEMPOTENT


def test_a_cast_to_any_is_a_gap_not_a_pure_call(scan_project: Scanner) -> None:
    anything = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.anything"]
    assert anything.idempotency is not Idempotency.IDEMPOTENT
    assert any("unresolved" in e.message for e in anything.evidence)


def test_a_cast_to_a_builtin_is_that_builtin(scan_project: Scanner) -> None:
    builtin = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.builtin"]
    assert builtin.idempotency is Idempotency.IDEMPOTENT, builtin.evidence
