"""django-comments-xtd's own test settings on a PostgreSQL database the processes share.

The app's suite runs on SQLite inside transactions that never commit, so a worker could
never read what a request wrote. The real-workers pass (``comments_xtd_flow``) runs the
app's views outside any test case against ``$REALAPP_DATABASE_URL`` instead: the
request's rows are committed, as in production, and a worker reads them again.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from django_comments_xtd.tests.settings import *  # noqa: F403  (the app's own settings)

_url = urlsplit(os.environ["REALAPP_DATABASE_URL"])
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _url.path.lstrip("/"),
        "USER": unquote(_url.username or ""),
        "PASSWORD": unquote(_url.password or ""),
        "HOST": _url.hostname or "",
        "PORT": str(_url.port or ""),
    }
}
ALLOWED_HOSTS = ["testserver"]  # the test client's host, outside Django's test runner
