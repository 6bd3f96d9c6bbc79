"""A return annotation does not name the class a function builds from the app's settings.

django-axes' ``AxesProxyHandler.get_implementation() -> AxesHandler`` returns
``import_string(settings.AXES_HANDLER)()``: ``AxesHandler``'s methods are ``pass``, while the
configured handler (not even its subclass) counts each failed login. Trusting the
annotation made the login signal handlers read ``idempotent``. A function that instantiates
a class whose path only the running app knows returns what the settings choose: a method
called on its result is a gap, the job ``unknown``.

Not affected: the same annotation when the body builds that class.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts, thread_views

HANDLERS = (
    "from django.db import models\n"
    "from django.db.models import F\n\n\n"
    "class Attempt(models.Model):\n"
    "    failures = models.IntegerField(default=0)\n\n\n"
    "class Handler:\n"
    "    def failed(self, name):\n"
    "        pass\n\n\n"
    "class CountingHandler:\n"
    "    def failed(self, name):\n"
    "        Attempt.objects.filter(pk=1).update(failures=F('failures') + 1)\n"
)
JOBS = (
    "from django.conf import settings\n"
    "from django.utils.module_loading import import_string\n\n"
    "from app.handlers import Handler\n\n\n"
    "class Proxy:\n"
    "    implementation = None\n\n"
    "    @classmethod\n"
    "    def get_implementation(cls) -> Handler:\n"
    "        if not cls.implementation:\n"
    "            cls.implementation = import_string(settings.LOGIN_HANDLER)()\n"
    "        return cls.implementation\n\n\n"
    "def configured() -> Handler:\n"
    "    return import_string(settings.LOGIN_HANDLER)()\n\n\n"
    "def built() -> Handler:\n"
    "    return Handler()\n\n\n"
    "def on_failed(name):\n"
    "    Proxy.get_implementation().failed(name)\n\n\n"
    "def on_failed_plain(name):\n"
    "    configured().failed(name)\n\n\n"
    "def on_failed_built(name):\n"
    "    built().failed(name)\n"
)
NAMES = ("on_failed", "on_failed_plain", "on_failed_built")


def test_a_class_chosen_by_the_settings_is_not_the_annotated_one(
    app_verdicts: Verdicts,
) -> None:
    verdicts = app_verdicts(handlers=HANDLERS, jobs=JOBS, views=thread_views(NAMES))
    assert {name: verdicts[name] for name in NAMES} == {
        "on_failed": Idempotency.UNKNOWN,
        "on_failed_plain": Idempotency.UNKNOWN,
        "on_failed_built": Idempotency.IDEMPOTENT,  # Handler() is built: its no-op runs
    }
