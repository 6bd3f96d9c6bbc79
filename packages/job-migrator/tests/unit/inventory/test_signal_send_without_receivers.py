"""A send of a signal no project receiver listens to, with Django's source read.

The call graph gives a send the project's receivers of its signal as callees. With none,
the scan used to follow the send into Django's ``Signal.send`` and report its loop over
the receivers connected at run time as three dynamic calls (``receiver(signal=self,
...)``), which a ``get_or_create`` claim before them then "guarded" (allauth's
``create_from_request`` came out ``needs_key``). It is one gap naming the send, as
documented, and no guard covers a gap.
"""

from __future__ import annotations

from pathlib import Path

from inventory import Idempotency, scan

SIGNALS = "from django.dispatch import Signal\n\norder_refunded = Signal()\n"
JOBS = """import threading

from shop.signals import order_refunded


def announce(order_id):
    order_refunded.send(sender=None, order_id=order_id)


def view(request):
    threading.Thread(target=announce, args=(request.POST["order"],)).start()
"""
RECEIVERS = """import requests
from django.dispatch import receiver

from shop.signals import order_refunded


@receiver(order_refunded)
def tell_warehouse(sender, order_id, **kwargs):
    requests.post("https://warehouse.example.com/refund", json={"order": order_id})
"""


def _announce(root: Path, receivers: bool) -> tuple[Idempotency, list[str], list[str]]:
    (root / "shop").mkdir(exist_ok=True)
    (root / "shop/__init__.py").write_text("")
    (root / "shop/signals.py").write_text(SIGNALS)
    (root / "shop/jobs.py").write_text(JOBS)
    if receivers:
        (root / "shop/receivers.py").write_text(RECEIVERS)
    job = scan(root, use_cache=False, write=False, jobs=1).job("shop.jobs.announce")
    assert job is not None
    return job.idempotency, [e.message for e in job.evidence], [u.call for u in job.unexplained]


def test_a_send_nobody_here_receives_is_one_gap_naming_the_send(tmp_path: Path) -> None:
    verdict, evidence, unexplained = _announce(tmp_path, receivers=False)

    assert verdict is Idempotency.UNKNOWN
    assert unexplained == ["django.dispatch.dispatcher.Signal.send"]
    assert any("signals sent with no receiver in the project" in m for m in evidence)
    assert not any("receiver(signal=self" in m for m in evidence), evidence


def test_a_send_a_project_receiver_listens_to_runs_that_receiver(tmp_path: Path) -> None:
    verdict, evidence, unexplained = _announce(tmp_path, receivers=True)

    assert verdict is Idempotency.NON_IDEMPOTENT, evidence
    assert unexplained == []
