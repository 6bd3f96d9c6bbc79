"""The app module of ``queue-runtime worker`` for a migrated Django app: its mail delivery.

Run with ``--django-settings django_worker_settings``. The worker's Runtime comes from the
app's own configuration (``[tool.queue_runtime]`` of its ``pyproject.toml``,
``QUEUE_RUNTIME_DATABASE_URL`` / ``QUEUE_RUNTIME_REDIS_URL``, or ``QR_TEST_SETTINGS``);
it imports the modules ``migrator apply`` rewrote (``$REALAPP_JOB_MODULES``,
comma-separated), which import ``queue_runtime.django_mail``, the delivery job.
"""

from __future__ import annotations

import importlib
import os

from queue_runtime import configure, django_mail  # noqa: F401  (the delivery job)
from queue_runtime.testing import settings_from_env

_settings = settings_from_env()
if _settings is not None:
    configure(_settings)

for _module in filter(None, os.environ.get("REALAPP_JOB_MODULES", "").split(",")):
    importlib.import_module(_module)
