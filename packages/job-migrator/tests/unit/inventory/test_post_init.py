"""Building a project dataclass runs its ``__post_init__``: the ``__init__`` that
``dataclasses`` writes calls it after setting the fields (its docs; attrs:
``__attrs_post_init__``; pydantic: ``model_post_init``). The scan followed a project
``__init__`` only, so a job whose receipt class posts when built read `idempotent`.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]

JOBS = """import dataclasses
import threading

import attr
import requests


@dataclasses.dataclass
class Receipt:
    order_id: int

    def __post_init__(self):
        requests.post("https://mail.example/receipt", json={"order": self.order_id})


@attr.s
class Invoice:
    order_id = attr.ib()

    def __attrs_post_init__(self):
        requests.post("https://mail.example/invoice", json={"order": self.order_id})


class Manual:
    def __init__(self, order_id):
        self.order_id = order_id

    def __post_init__(self):
        requests.post("https://mail.example/never")


def receipt(order_id):
    Receipt(order_id)


def invoice(order_id):
    Invoice(order_id)


def manual(order_id):
    Manual(order_id)


def view(request):
    threading.Thread(target=receipt, args=(1,)).start()
    threading.Thread(target=invoice, args=(1,)).start()
    threading.Thread(target=manual, args=(1,)).start()
"""


def test_a_generated_init_runs_the_post_init_hook(scan_project: Scanner) -> None:
    inventory = scan_project({"app/__init__.py": "", "app/jobs.py": JOBS})
    verdicts = {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}
    assert verdicts["receipt"] is Idempotency.NON_IDEMPOTENT
    assert verdicts["invoice"] is Idempotency.NON_IDEMPOTENT
    # a class's own __init__ runs instead, and it calls no __post_init__
    assert verdicts["manual"] is Idempotency.IDEMPOTENT
