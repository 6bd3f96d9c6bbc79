"""Load-test sandbox for migrated django-comments-xtd: its own queue schema, its own database.

``migrator loadtest JOB --sandbox comments_xtd_sandbox --args comments_xtd_sandbox:ATTR``:
the queue comes from ``$REALAPP_SANDBOX_SETTINGS`` (a Settings JSON naming
``django_worker_settings``, so the load test's workers set Django up), the app's database
from ``$REALAPP_DATABASE_URL`` (a sandbox database, migrated before), every mail recorded,
none sent (:mod:`django_outbox`).

- ``emails``: the arguments of ``run_email_thread`` (the moved ``EmailThread``), one
  recipient per job.
- ``comments``: a committed comment per job on an article of its own, with a follower
  (so ``notify_comment_followers`` mails someone); the job gets the ``XtdComment``
  itself, which the runtime's model codec stores by reference and the worker reads again.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from queue_runtime import Settings, configure

SETTINGS = Settings.model_validate_json(os.environ["REALAPP_SANDBOX_SETTINGS"])
configure(SETTINGS)
_RUN = secrets.token_hex(3)


def _django() -> None:
    import django
    from django.conf import settings

    if not settings.configured:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS.django_settings or "")
        django.setup()


def emails(i: int) -> dict[str, Any]:
    return {
        "subject": f"load test {_RUN} #{i}",
        "body": f"body {i}",
        "from_email": "Load test <lt@loadtest.example>",
        "recipient_list": [f"lt-{_RUN}-{i}@loadtest.example"],
        "fail_silently": False,
        "html": f"<p>body {i}</p>",
    }


def comments(i: int) -> dict[str, Any]:
    _django()
    from django.contrib.contenttypes.models import ContentType
    from django_comments_xtd.models import XtdComment
    from django_comments_xtd.tests.models import Article

    tag = f"lt-{_RUN}-{i}"
    article = Article.objects.create(title=tag, slug=tag, body="b")
    made = {"content_type": ContentType.objects.get_for_model(article), "site_id": 1}
    made.update({"object_pk": str(article.pk), "followup": True, "is_public": True})
    XtdComment.objects.create(user_name="F", user_email=f"{tag}-f@loadtest.example", **made)
    comment = XtdComment.objects.create(
        user_name="C", user_email=f"{tag}@loadtest.example", comment="c", **made
    )
    return {"comment": comment}


__all__ = ["SETTINGS", "comments", "emails"]
