"""A library function that hands back its argument is no pure end of the road.

``copy.copy(job).run()`` runs ``Job.run`` on the copy (the copy module's docs: a shallow
or deep copy of the object, of its class), as do typing's ``assert_type`` / ``reveal_type``
("return the value unchanged"); ``operator.attrgetter("run")(job)()`` calls what the getter
read, known only at run time. Before, the catalogue's pure ``copy.*`` and ``operator.*``
globs matched the whole chain (fnmatch's ``*`` crosses a call): jobs posting through them
were called ``idempotent`` with no evidence (found probing idioms, stop 50)."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import copy
import operator
import threading

import requests


class Job:
    def run(self):
        requests.post("https://hooks.example.com/run")


def shallow(job: Job):
    copy.copy(job).run()


def deep(job: Job):
    copy.deepcopy(job).run()


def got(job: Job):
    operator.attrgetter("run")(job)()


def data(rows: list):
    return copy.deepcopy(rows).count(1)


def view():
    threading.Thread(target=shallow, args=(Job(),)).start()
    threading.Thread(target=deep, args=(Job(),)).start()
    threading.Thread(target=got, args=(Job(),)).start()
    threading.Thread(target=data, args=([],)).start()
"""


def test_a_copy_runs_its_classs_methods(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    for name in ("app.shallow", "app.deep"):
        assert "requests.post" in {e.api for e in jobs[name].effects}, jobs[name].evidence
        assert jobs[name].idempotency is Idempotency.NON_IDEMPOTENT
    assert jobs["app.data"].idempotency is Idempotency.IDEMPOTENT  # a list's copy's count


def test_calling_what_a_getter_read_is_a_dispatch(scan_project: Scanner) -> None:
    got = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.got"]
    assert got.idempotency is Idempotency.UNKNOWN
    assert any("dynamic dispatch" in e.message for e in got.evidence)
