"""What the shop's workers import: ``queue-runtime worker shop.worker_app``.

Importing ``shop.app`` imports every route, so every ``@job`` that ``migrator
apply`` added registers. The jobs find the shop's services (its database,
mail, the payment gateway) through ``shop.services.current()``, which the web
app's lifespan installs in the web process; a worker process has no lifespan,
so this module installs them from the same environment (``SHOP_HOME``,
``SHOP_SMTP_HOST``...), as ``shop.cron`` does, and creates the tables a job may
read before the web app ever ran (the periodic cache warmer runs at start).
Without it, every job dies with ``ShopNotRunning``.
"""

from __future__ import annotations

import os

import shop.app  # noqa: F401  (its routes import the jobs: their @job registers them)
from shop.db import init_db
from shop.services import Services, install
from shop.settings import Settings

settings = Settings.from_env(os.environ)
init_db(settings.database)
install(Services(settings))
