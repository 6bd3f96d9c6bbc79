"""What a shop test's worker imports in queue mode: ``queue-runtime worker queue_worker_app``.

Only used once the shop has been migrated (``migrator apply``) and its tests run
with ``QUEUE_RUNTIME_MODE=queue`` (see ``conftest.py``). Importing ``shop.app``
imports every route, so every ``@job`` the codemods added registers; the shop's
services come from the environment, ``SHOP_HOME`` being the test's temp dir, so
the worker's jobs write the database, media and reports the test reads.

A worker outlives nobody: if the test process that started it dies (a timeout,
a kill), the worker exits too instead of polling a queue nobody cleans up.
"""

from __future__ import annotations

import os
import threading
import time

import shop.app  # noqa: F401  (its routes import the jobs: their @job registers them)
from shop.services import Services, install
from shop.settings import Settings

PARENT_ENV = "SHOP_TEST_PARENT_PID"

install(Services(Settings.from_env(os.environ)))


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(3)


if os.environ.get(PARENT_ENV):
    threading.Thread(
        target=_exit_with_parent,
        args=(int(os.environ[PARENT_ENV]),),
        name="exit-with-parent",
        daemon=True,
    ).start()
