"""Checkout validation and the warehouse picking board.

Both have methods that look like job APIs and are not: ``CheckoutForm.submit``
(not ``Executor.submit``) validates input and returns a value; and
``PickingBoard.add_job`` (not APScheduler's ``add_job``) pins a to-do card on
an in-memory board. The scanner must not report either.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from shop.models import OrderIn, Product


class OutOfStock(ValueError):
    """Not enough stock for this order."""


@dataclass(frozen=True, slots=True)
class Draft:
    user_id: int
    product: Product
    qty: int
    day: str


class CheckoutForm:
    def __init__(self, data: OrderIn, product: Product) -> None:
        self.data = data
        self.product = product

    def submit(self) -> Draft:
        if self.product.stock < self.data.qty:
            raise OutOfStock(f"only {self.product.stock} of {self.product.name!r} left")
        return Draft(self.data.user_id, self.product, self.data.qty, self.data.day)


@dataclass(frozen=True, slots=True)
class PickCard:
    order_id: int
    product_id: int
    qty: int


class PickingBoard:
    def __init__(self) -> None:
        self._cards: list[PickCard] = []
        self._lock = threading.Lock()

    def add_job(self, order_id: int, product_id: int, qty: int) -> PickCard:
        card = PickCard(order_id, product_id, qty)
        with self._lock:
            self._cards.append(card)
        return card

    def cards(self) -> list[PickCard]:
        with self._lock:
            return list(self._cards)
