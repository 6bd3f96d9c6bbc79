"""The shop's load-test sandbox: ``migrator loadtest JOB --sandbox shop.loadtest_settings``.

Importing it (the load test does, and so does each of its workers) configures
queue_runtime for a sandbox and gives the shop's jobs a world where their
effects are harmless:

- the queue: ``SHOP_SANDBOX_DATABASE_URL`` (default: ``DATABASE_URL``), in a
  schema of its own (``shop_sandbox``), never the app's; Redis from
  ``REDIS_URL`` under the prefix ``shop-sandbox`` (``SHOP_SANDBOX_REDIS_PREFIX``
  to change it); short lease and poll
  timings, so a killed worker's jobs come back within seconds;
- the shop: its files under ``SHOP_SANDBOX_HOME`` (default ``.sandbox`` in
  the current directory), mail kept in an in-memory outbox (nothing goes to
  SMTP), the payment gateway a sandbox URL without a key;
- data for the jobs: one customer, one product and orders ``0`` to
  ``ORDERS - 1`` (the load test's default arguments give job ``i`` the
  parameter value ``i``: ``send_receipt(order_id=i)``).
"""

from __future__ import annotations

import os
from pathlib import Path

import shop.app  # noqa: F401  (its routes import the jobs: their @job registers them)
from queue_runtime import configure
from shop.db import connect, init_db
from shop.services import Services, install
from shop.settings import Settings

ORDERS = 5_000
SCHEMA = "shop_sandbox"


def _seed(settings: Settings) -> None:
    """The rows the jobs read; every process importing this runs it (INSERT OR IGNORE)."""
    init_db(settings.database)
    with connect(settings.database) as conn:
        conn.execute("INSERT OR IGNORE INTO users VALUES (1, 'sandbox@example.com', 'Sandbox')")
        conn.execute("INSERT OR IGNORE INTO products VALUES (1, 'Mug', 1200, 1000000)")
        conn.executemany(
            "INSERT OR IGNORE INTO orders (id, user_id, product_id, qty, amount_cents, status, day)"
            " VALUES (?, 1, 1, 1, 1200, 'paid', '2026-01-01')",
            [(n,) for n in range(ORDERS)],
        )


shop_settings = Settings.in_directory(
    Path(os.environ.get("SHOP_SANDBOX_HOME", ".sandbox")).resolve(),
    gateway_url="https://sandbox.payments.example.com",
)
_seed(shop_settings)
install(Services(shop_settings, outbox=[]))

configure(
    mode="queue",
    database_url=os.environ.get("SHOP_SANDBOX_DATABASE_URL") or os.environ["DATABASE_URL"],
    redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
    schema=SCHEMA,
    redis_prefix=os.environ.get("SHOP_SANDBOX_REDIS_PREFIX", "shop-sandbox"),
    lease_ttl=3.0,
    poll_interval=0.2,
    shutdown_grace=2.0,
)
