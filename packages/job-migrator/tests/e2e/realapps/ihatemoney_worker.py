"""The app module of ``queue-runtime worker`` for migrated ihatemoney: its jobs, and the outbox.

The worker's Runtime comes from the app's own configuration (``[tool.queue_runtime]`` of its
``pyproject.toml``, ``QUEUE_RUNTIME_DATABASE_URL`` / ``QUEUE_RUNTIME_REDIS_URL``); this module
imports the modules ``migrator apply`` registered jobs in (``$REALAPP_JOB_MODULES``,
comma-separated) and records each mail it sends (:mod:`ihatemoney_outbox`).
"""

from __future__ import annotations

import importlib
import os

import ihatemoney_outbox  # noqa: F401  (counts the mails this worker sends)
import ihatemoney_startup  # noqa: F401  (the session the model codec reads references with)

for _module in filter(None, os.environ.get("REALAPP_JOB_MODULES", "").split(",")):
    importlib.import_module(_module)
