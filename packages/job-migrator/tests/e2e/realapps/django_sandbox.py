"""Load-test sandbox for Django mail delivery: its own queue schema, mail recorded, not sent.

``migrator loadtest queue_runtime.django_mail.deliver --sandbox django_sandbox --args
django_sandbox:messages``: the queue comes from ``$REALAPP_SANDBOX_SETTINGS`` (a Settings
JSON naming ``django_worker_settings``, so the load test's workers set Django up), and each
job delivers a message of its own, built here by Django as the app builds its mail.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from queue_runtime import Settings, configure

SETTINGS = Settings.model_validate_json(os.environ["REALAPP_SANDBOX_SETTINGS"])
configure(SETTINGS)
_RUN = secrets.token_hex(3)


def messages(i: int) -> dict[str, Any]:
    import django
    from django.conf import settings

    if not settings.configured:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS.django_settings or "")
        django.setup()
    from django.core.mail import EmailMultiAlternatives

    from queue_runtime import django_mail

    msg = EmailMultiAlternatives(
        f"load test {_RUN} #{i}", f"body {i}", None, [f"lt-{_RUN}-{i}@loadtest.example"]
    )
    msg.attach_alternative(f"<p>body {i}</p>", "text/html")
    payload = django_mail.payload_of(msg)
    assert not isinstance(payload, str), payload
    return {"message": payload.model_dump(mode="json")}


__all__ = ["SETTINGS", "messages"]
