"""A worker's Django settings: the app's test settings (``$REALAPP_DJANGO_SETTINGS``), with
every mail recorded instead of sent (:class:`django_outbox.RecordingBackend`)."""

from __future__ import annotations

import importlib
import os

globals().update(
    {
        name: value
        for name, value in vars(
            importlib.import_module(os.environ["REALAPP_DJANGO_SETTINGS"])
        ).items()
        if name.isupper()
    }
)
EMAIL_BACKEND = "django_outbox.RecordingBackend"
