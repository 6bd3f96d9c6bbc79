"""The sandbox settings module: ``--sandbox tests.e2e.loadtest_app.sandbox``.

Its import configures queue_runtime from ``LOADTEST_APP_SETTINGS`` (a Settings
JSON the test writes: its own schema and Redis prefix on the test servers).
"""

from __future__ import annotations

import os

from queue_runtime import Settings, configure

configure(Settings.model_validate_json(os.environ["LOADTEST_APP_SETTINGS"]))
