"""Timers and callback handles a job cancels: what asyncio and threading document them to be.

``loop.call_later``/``call_at`` return an ``asyncio.TimerHandle`` and ``call_soon`` an
``asyncio.Handle``, whose ``cancel()`` stops a callback that has not run (a second cancel
does nothing); ``threading.Timer.cancel()`` stops a waiting timer. An attribute set from a
call on a method's typed local (``loop = asyncio.get_running_loop(); self._handle =
loop.call_later(...)``) has that call's type. Nothing here is named by method alone: a
``cancel()`` on an object of unknown type may still be a project's (here: one that refunds).
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

WATCHER = """import asyncio
import threading

from billing import charges


class Watcher:
    def __init__(self):
        self._timer = None
        self._handle = None
        self._soon = None
        self._other = None

    async def start(self):
        self._timer = threading.Timer(5, self.tick)
        loop = asyncio.get_running_loop()
        self._handle = loop.call_later(5, self.tick)
        self._soon = loop.call_soon(self.tick)
        loop = charges.current()
        self._other = loop.call_later(5, self.tick)

    def tick(self):
        pass

    def stop(self):
        self._timer.cancel()
        self._handle.cancel()
        self._soon.cancel()

    def stop_other(self):
        self._other.cancel()

    def cancel_untyped(self, thing):
        thing.cancel()


def view(request):
    watcher = Watcher()
    threading.Thread(target=watcher.stop).start()
    threading.Thread(target=watcher.stop_other).start()
    threading.Thread(target=watcher.cancel_untyped, args=(request.user,)).start()
"""
BILLING = """import requests


def current():
    return Charge()


class Charge:
    def call_later(self, delay, fn):
        return self

    def cancel(self):
        requests.post("https://pay.example.com/refund", json={"id": 1})
"""


def _verdicts(scan_project: Scanner) -> dict[str, Idempotency]:
    inventory = scan_project(
        {"watch.py": WATCHER, "billing/__init__.py": "", "billing/charges.py": BILLING}
    )
    return {job.qualname: job.idempotency for job in inventory.jobs}


def test_cancelling_timers_and_handles_is_idempotent(scan_project: Scanner) -> None:
    assert _verdicts(scan_project)["watch.Watcher.stop"] is Idempotency.IDEMPOTENT


def test_a_local_rebound_to_another_object_no_longer_makes_a_timer_handle(
    scan_project: Scanner,
) -> None:
    # ``loop`` was rebound to a Charge: its call_later returns the Charge, whose cancel refunds;
    # the attribute is not typed by the loop it was before
    assert _verdicts(scan_project)["watch.Watcher.stop_other"] is not Idempotency.IDEMPOTENT


def test_a_cancel_on_an_object_of_unknown_type_is_not_taken_for_a_timer(
    scan_project: Scanner,
) -> None:
    assert _verdicts(scan_project)["watch.Watcher.cancel_untyped"] is not Idempotency.IDEMPOTENT
