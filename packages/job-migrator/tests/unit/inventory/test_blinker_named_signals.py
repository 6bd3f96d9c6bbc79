"""blinker's named signals are one signal per name, however each module writes it.

blinker's documentation: ``signal(name)`` returns "the named signal, creating it if needed",
the same object for the same name, in a default namespace. So ``@signal("report-ready").connect``
in one module receives ``signal("report-ready").send(...)`` written inline in another, a
module's ``ready = signal("report-ready")`` and a class's ``self.ready = signal("report-ready")``
(set in ``__init__``, under ``try:`` as often as not). The send runs each receiver in the
caller, so the job's verdict is its receivers'. A ``Namespace()``'s signal of the same name
is another signal, and a name computed at run time names none the scan knows.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]

RECEIVERS = """import requests
from blinker import Namespace, signal

private = Namespace()


@signal("report-ready").connect
def mark_ready(sender, **kw):
    requests.put("https://reports.example.com/1", json={"ready": True})


def on_local(sender, **kw):
    requests.put("https://reports.example.com/local")


def setup():
    local = signal("report-local")
    local.connect(on_local)


@private.signal("report-ready").connect
def post_again(sender, **kw):
    requests.post("https://reports.example.com/again")
"""

JOBS = """import threading

from blinker import signal

ready = signal("report-ready")


def inline(report_id):
    signal("report-ready").send(report_id)


def through_module(report_id):
    ready.send(report_id)


def through_local(report_id):
    signal("report-local").send(report_id)


class Notifier:
    def __init__(self):
        try:
            self.ready = signal("report-ready")
        except Exception:
            self.ready = None

    def run(self, report_id):
        self.ready.send(report_id)


def view(request):
    threading.Thread(target=inline, args=(1,)).start()
    threading.Thread(target=through_module, args=(1,)).start()
    threading.Thread(target=through_local, args=(1,)).start()
    threading.Thread(target=Notifier().run, args=(1,)).start()
"""


def test_a_named_signal_runs_its_receivers_however_it_is_written(scan_project: Scanner) -> None:
    inventory = scan_project(
        {"app/__init__.py": "", "app/receivers.py": RECEIVERS, "app/jobs.py": JOBS}
    )
    jobs = {j.qualname.rsplit(".", 1)[-1]: j for j in inventory.jobs}
    for name, url_api in (
        ("inline", "requests.put"),
        ("through_module", "requests.put"),
        ("through_local", "requests.put"),
        ("run", "requests.put"),
    ):
        job = jobs[name]
        # The default namespace's receivers ran (a PUT: idempotent), and the private
        # namespace's "report-ready" receiver (a POST) did not.
        assert [e.api for e in job.effects] == [url_api], (name, job.effects)
        assert job.idempotency is Idempotency.IDEMPOTENT, (name, job.evidence)
        assert not job.unexplained, name


def test_a_name_computed_at_run_time_names_no_signal(scan_project: Scanner) -> None:
    jobs_source = """import threading

from blinker import signal


def computed(kind):
    signal(kind).send(1)


def view(request):
    threading.Thread(target=computed, args=("report-ready",)).start()
"""
    inventory = scan_project(
        {"app/__init__.py": "", "app/receivers.py": RECEIVERS, "app/jobs.py": jobs_source}
    )
    (job,) = [j for j in inventory.jobs if j.qualname == "app.jobs.computed"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert not job.effects
