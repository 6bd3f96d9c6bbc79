"""Django's application registry is a lookup, whatever the label.

``apps.get_model(settings.IMAGE_MODEL)`` (wagtail's ``get_image_model()``): a label the
scan cannot read, so the scan followed Django's own ``Apps.get_model`` and stopped at
``app_config.import_models``, leaving the job ``unknown``. The registry
(``get_model``, ``get_app_config(s)``, ``is_installed``, an AppConfig's ``get_model``) is
populated at start-up and read in memory; what the job then does with the model is still
read from the calls it makes on it.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts, thread_views

JOBS = (
    "from django.apps import apps\n"
    "from django.conf import settings\n\n\n"
    "def image_model():\n"
    "    return apps.get_model(settings.IMAGE_MODEL, require_ready=False)\n\n\n"
    "def lookup(label):\n"
    "    config = apps.get_app_config(label)\n"
    "    return config.get_model('Thing'), apps.is_installed(label)\n\n\n"
    "def record(label, value):\n"
    "    Model = apps.get_model(settings.AUDIT_MODEL)\n"
    "    Model.objects.create(label=label, value=value)\n"
)
NAMES = ("image_model", "lookup", "record")
VIEWS = thread_views(NAMES)


def test_a_registry_lookup_is_no_effect(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS)
    assert verdicts["image_model"] == Idempotency.IDEMPOTENT
    assert verdicts["lookup"] == Idempotency.IDEMPOTENT


def test_what_is_done_with_the_model_still_counts(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS)
    assert verdicts["record"] == Idempotency.NON_IDEMPOTENT  # a row inserted
