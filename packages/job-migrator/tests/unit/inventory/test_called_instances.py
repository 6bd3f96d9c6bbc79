"""An instance attribute called: ``self.session(url)`` runs ``Session.__call__``.

Python's data model: ``x(args)`` is ``type(x).__call__(x, args)``. The scan followed it for
a module-level instance (``caller = Session()``; ``caller(url)``) and for a parameter of a
known class, but read ``self.session(url)`` (or ``bot.session(url)``), where ``session``
is no method but an attribute holding an instance, as a call it could not follow: the job
came out `unknown`. The attribute's class is what the scan already knows of it (assigned in
a method, annotated, or ``__init__``'s parameter that every caller types); a class without
``__call__``, or an attribute of unknown class, leaves the call unresolved.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]

JOBS = """import threading

import requests


class Session:
    def __call__(self, url):
        return requests.post(url, json={}).json()


class Plain:
    def send(self, url):
        requests.post(url)


class Client:
    def __init__(self):
        self.session = Session()

    def fetch(self, url):
        return self.session(url)


class Annotated:
    def __init__(self):
        self.session: Session = make()

    def fetch(self, url):
        return self.session(url)


class Handed:
    def __init__(self, session):
        self.session = session

    def fetch(self, url):
        return self.session(url)


class Child(Client):
    def again(self, url):
        return self.session(url)


class NotCallable:
    def __init__(self):
        self.plain = Plain()

    def fetch(self, url):
        return self.plain(url)


def make():
    return Session()


client = Client()


def assigned(url):
    Client().fetch(url)


def annotated(url):
    Annotated().fetch(url)


def handed(url):
    Handed(Session()).fetch(url)


def inherited(url):
    Child().again(url)


def from_outside(url):
    client.session(url)


def not_callable(url):
    NotCallable().fetch(url)


def view(request):
    threading.Thread(target=assigned, args=(request.url,)).start()
    threading.Thread(target=annotated, args=(request.url,)).start()
    threading.Thread(target=handed, args=(request.url,)).start()
    threading.Thread(target=inherited, args=(request.url,)).start()
    threading.Thread(target=from_outside, args=(request.url,)).start()
    threading.Thread(target=not_callable, args=(request.url,)).start()
"""


def _jobs(scan_project: Scanner, jobs: str = JOBS) -> dict[str, tuple[Idempotency, set[str]]]:
    inventory = scan_project({"app/__init__.py": "", "app/jobs.py": jobs})
    return {
        j.qualname.rsplit(".", 1)[-1]: (j.idempotency, {e.kind for e in j.effects})
        for j in inventory.jobs
    }


def test_an_attribute_holding_an_instance_runs_its_classs_call(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    for name in ("assigned", "annotated", "handed", "inherited", "from_outside"):
        assert jobs[name] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST}), name


def test_an_instance_without_call_stays_unresolved(scan_project: Scanner) -> None:
    # Plain defines no __call__: calling it would raise, and its send is not what runs
    assert _jobs(scan_project)["not_callable"] == (Idempotency.UNKNOWN, set())


def test_an_attribute_whose_class_is_not_known_stays_unresolved(scan_project: Scanner) -> None:
    # Handed is built with a Session here and with a value of unknown type elsewhere
    jobs = JOBS + (
        "\n\ndef dynamic(url, chosen):\n"
        "    Handed(chosen).fetch(url)\n\n\n"
        "def view2(request):\n"
        "    threading.Thread(target=dynamic, args=(request.url, request.session)).start()\n"
    )
    found = _jobs(scan_project, jobs)
    assert found["handed"][0] is Idempotency.UNKNOWN
    assert found["dynamic"][0] is Idempotency.UNKNOWN
