"""The product cache (a table, so that every process sees it)."""

from __future__ import annotations

import json
from threading import Thread

from ..db import connect
from ..repo import load_product
from ..services import current


def warm_product_cache(product_id: int) -> None:
    """Job (idempotent: SETs the key to the product's current value)."""
    with connect(current().settings.database) as conn:
        product = load_product(conn, product_id)
        value = json.dumps({"name": product.name, "price_cents": product.price_cents})
        conn.execute(
            "INSERT INTO cache (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (f"product:{product_id}", value),
        )


def warm_all_product_caches() -> None:
    """Job run by the scheduler (idempotent: warms every product's key)."""
    with connect(current().settings.database) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM products ORDER BY id")]
    for product_id in ids:
        warm_product_cache(product_id)


def cached_product(product_id: int) -> dict[str, object] | None:
    with connect(current().settings.database) as conn:
        row = conn.execute("SELECT value FROM cache WHERE key = ?", (f"product:{product_id}",))
        found = row.fetchone()
    return json.loads(found[0]) if found else None


class CacheWarmer(Thread):
    """A Thread subclass: ``CacheWarmer(product_id).start()`` runs the job in ``run``."""

    def __init__(self, product_id: int) -> None:
        super().__init__(name=f"cache-warmer-{product_id}")
        self.product_id = product_id

    def run(self) -> None:
        warm_product_cache(self.product_id)
