"""Framework context for workers: a Django project or a Flask app, set up once, scoped per job.

A job moved out of a request still expects what the request gave it: Django's
apps loaded (``django.setup()``) and its database connections recycled as the
request cycle does, or a Flask application context (``current_app``,
extensions, ``url_for`` with a configured server name). ``queue-runtime
worker`` sets the framework up before it imports the app module, and every
attempt runs inside :meth:`AppContext.job_scope`.

What to set up comes from :class:`~queue_runtime.config.Settings`
(``django_settings``, ``flask_app``, ``server_name``, ``url_scheme``: from
``[tool.queue_runtime]``, the environment or the worker's flags). The
framework packages are imported only when configured: the runtime does not
depend on them.

Public: :class:`FrameworkSpec`, :func:`bootstrap`, :func:`job_scope`,
:func:`describe_worker_bootstrap` (what a migrated app's workers need, for
``migrator apply``'s report and PR text).
"""

from queue_runtime.bootstrap._describe import WorkerBootstrap, describe_worker_bootstrap, detect
from queue_runtime.bootstrap._load import (
    AppContext,
    FrameworkSpec,
    bootstrap,
    bootstrap_project,
    job_scope,
)
from queue_runtime.bootstrap._types import BootstrapError, Framework

__all__ = [
    "AppContext",
    "BootstrapError",
    "Framework",
    "FrameworkSpec",
    "WorkerBootstrap",
    "bootstrap",
    "bootstrap_project",
    "describe_worker_bootstrap",
    "detect",
    "job_scope",
]
