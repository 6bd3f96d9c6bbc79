"""Stock keeping."""

from __future__ import annotations

from ..db import connect
from ..repo import load_product, save_product
from ..services import current


def decrement_stock(product_id: int, qty: int) -> None:
    """Job (unsafe: stock is account state; a retry takes it twice, and the
    read-modify-write races with concurrent orders)."""
    with connect(current().settings.database) as conn:
        product = load_product(conn, product_id)
        product.stock -= qty
        save_product(conn, product)
