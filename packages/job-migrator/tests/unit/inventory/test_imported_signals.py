"""A receiver connected to a signal imported from another module, in any file.

blinker's ``@sig.connect`` and ``sig.connect(fn)`` register a receiver that ``sig.send()``
runs in the sender's thread. The extractor reads one file: a signal made in ``app.events``
(``Namespace().signal("paid")``, ``signal("joined")``, ``Signal()``) has no type where it
is imported. Outside a Flask or Django file such receivers were not reported at all (a
silent miss). The extractor now reports an imported lowercase object connected to one of
the file's functions as a receiver to confirm, and the classifier keeps it only if the
object is a signal where it is made; anything else connected that way is no site.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

EVENTS = """from blinker import Namespace, Signal, signal
from django.dispatch import Signal as DjangoSignal

ns = Namespace()
order_paid = ns.signal("order-paid")
user_joined = signal("user-joined")
refund_issued = Signal()
stock_low = DjangoSignal()


class Pool:
    def connect(self, callback):
        self.callback = callback


pool = Pool()
"""

HANDLERS = """import requests

from app.events import order_paid, pool, refund_issued, stock_low, user_joined


@order_paid.connect
def send_receipt(sender, **kwargs):
    requests.post("https://mail.example.com/send", json={"order": kwargs.get("order_id")})


@user_joined.connect
def welcome(sender, **kwargs):
    requests.post("https://mail.example.com/welcome", json={})


def audit(sender, **kwargs):
    requests.post("https://audit.example.com", json={})


def reorder(sender, **kwargs):
    requests.post("https://supplier.example.com", json={})


def on_ready(conn):
    requests.post("https://status.example.com", json={})


refund_issued.connect(audit)
stock_low.connect(reorder)
pool.connect(on_ready)
"""


def _receivers(scan_project: Scanner, handlers: str = HANDLERS) -> dict[str, int]:
    inventory = scan_project(
        {"app/__init__.py": "", "app/events.py": EVENTS, "app/handlers.py": handlers}
    )
    return {
        (site.job or "").rsplit(".", 1)[-1]: site.location.line
        for site in inventory.sites
        if site.pattern is Pattern.SIGNAL_RECEIVER
    }


def test_receivers_of_signals_made_in_another_module_are_sites(scan_project: Scanner) -> None:
    found = _receivers(scan_project)
    assert found.keys() == {"send_receipt", "welcome", "audit", "reorder"}
    assert found["send_receipt"] == 6  # the decorator's line, as for any decorated receiver
    assert found["audit"] == 28  # the connect call's line


def test_an_imported_object_that_is_no_signal_connects_nothing(scan_project: Scanner) -> None:
    # pool.connect(on_ready): a Pool's own connect method, not a signal's
    assert "on_ready" not in _receivers(scan_project)


def test_an_object_of_unknown_origin_connects_nothing(scan_project: Scanner) -> None:
    # imported from a module the scan does not have: nothing says it is a signal
    handlers = HANDLERS.replace(
        "from app.events import order_paid,",
        "from vendor.hooks import order_paid\nfrom app.events import",
    )
    assert "send_receipt" not in _receivers(scan_project, handlers)
