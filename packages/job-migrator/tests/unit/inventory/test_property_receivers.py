"""``self.client.post()`` where ``client`` is a ``@property``: the getter's result is called.

Python's data model: reading a property runs its getter, so ``self.client`` is what the
getter returns (its annotation, or the class it builds), as for ``functools.cached_property``
and Django's ``cached_property``. Before, the receiver was of unknown type and the call an
unresolved gap. A plain method named ``client`` is a bound method when read, not its result."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import functools
import threading

import requests


class Notifier:
    def send(self, text):
        requests.post("https://hooks.example.com/notify", json={"text": text})


class Service:
    def __init__(self):
        self._session = requests.Session()

    @property
    def client(self) -> requests.Session:
        return self._session

    @functools.cached_property
    def notifier(self):
        return Notifier()

    def factory(self) -> Notifier:
        return Notifier()

    def fetch(self):
        return self.client.get("https://api.example.com/items")

    def announce(self):
        self.notifier.send("hello")

    def unbound(self):
        self.factory.send("hello")


def view():
    s = Service()
    threading.Thread(target=s.fetch).start()
    threading.Thread(target=s.announce).start()
    threading.Thread(target=s.unbound).start()
"""


def test_a_property_is_what_its_getter_returns(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    fetch = jobs["app.Service.fetch"]
    assert "requests.Session.get" in {e.api for e in fetch.effects}, fetch.evidence
    assert fetch.idempotency is Idempotency.IDEMPOTENT
    announce = jobs["app.Service.announce"]
    assert "requests.post" in {e.api for e in announce.effects}, announce.evidence
    assert announce.idempotency is Idempotency.NON_IDEMPOTENT


def test_a_plain_method_read_as_an_attribute_is_not_its_result(scan_project: Scanner) -> None:
    unbound = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.Service.unbound"]
    assert unbound.idempotency is not Idempotency.IDEMPOTENT
    assert "requests.post" not in {e.api for e in unbound.effects}
