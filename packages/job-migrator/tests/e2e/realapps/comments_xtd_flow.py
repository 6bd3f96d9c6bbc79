"""django-comments-xtd's mail flow, run for real: a comment posted, confirmed, its follower told.

Run by the app's venv python with ``DJANGO_SETTINGS_MODULE=django_worker_settings`` and
``REALAPP_DJANGO_SETTINGS=comments_xtd_settings`` (the app's test settings on a shared
PostgreSQL database, every mail recorded in ``$REALAPP_OUTBOX``):

- ``python -m comments_xtd_flow migrate``: the app's tables, once, before any worker starts.
- ``python -m comments_xtd_flow run RUN``: what a visitor does, through the app's own URLs
  and views, outside any test case (each request's rows committed, as in production):

  1. an article, and a confirmed comment on it by Bob, who asked for follow-ups;
  2. Alice, not logged in, posts a comment with the comment form's security data: the
     app mails her a confirmation request (``send_email_confirmation_request`` ->
     ``utils.send_mail``, the ``EmailThread`` that ``migrator apply`` moved);
  3. the flow reads the confirmation link from that mail, wherever it was sent (this
     process inline, a worker async), and follows it: the ``confirm`` view creates her
     comment and calls ``notify_comment_followers(comment)`` (moved: the comment goes
     by reference, a worker reads the row again), which mails Bob.

  It waits for each mail with a deadline and prints one JSON line: the two mails as
  recorded. With ``$REALAPP_KILL_FIRST_SENDER``, once the first mail's job has finished,
  the worker that sent it is SIGKILLed (:mod:`first_sender`): the second must come from
  the other worker.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import django

DEADLINE = float(os.environ.get("REALAPP_JOB_DEADLINE", "60"))
CONFIRM = re.compile(r"/comments/confirm/(?P<key>[^/\s]+)/")
THREAD_JOB = "django_comments_xtd.utils.run_email_thread"
FOLLOWERS_JOB = "django_comments_xtd.views.notify_comment_followers"


def _mail_to(address: str, subject: str) -> dict[str, Any]:
    """The one mail to ``address`` with this subject in the outbox, waited for."""
    path = Path(os.environ["REALAPP_OUTBOX"])
    deadline = time.monotonic() + DEADLINE
    while True:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        found = [m for m in map(json.loads, lines) if m["to"] == [address]]
        found = [m for m in found if m["subject"] == subject]
        if found:
            return found[0]  # type: ignore[no-any-return]
        if time.monotonic() > deadline:
            raise SystemExit(f"no mail {subject!r} to {address} within {DEADLINE:.0f}s")
        time.sleep(0.05)


def _settled(*names: str) -> None:
    """Every job of these names finished (when the queue holds them: async mode)."""
    from queue_runtime import current
    from queue_runtime.store import JobQuery, JobStatus

    done = {JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED}
    deadline = time.monotonic() + DEADLINE
    while True:
        jobs = [
            j for n in names for j in current().inspector.list_jobs(JobQuery(job=n, limit=500)).jobs
        ]
        if all(j.status in done for j in jobs):
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"jobs {names} not finished within {DEADLINE:.0f}s")
        time.sleep(0.05)


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def run(tag: str) -> dict[str, Any]:
    import first_sender
    from django.contrib.contenttypes.models import ContentType
    from django.test import Client
    from django.urls import reverse
    from django_comments_xtd import django_comments
    from django_comments_xtd.models import XtdComment
    from django_comments_xtd.tests.models import Article

    article = Article.objects.create(title=f"Article {tag}", slug=f"article-{tag}", body="b")
    bob = f"bob-{tag}@example.com"
    XtdComment.objects.create(
        content_type=ContentType.objects.get_for_model(article),
        object_pk=str(article.pk),
        site_id=1,
        user_name="Bob",
        user_email=bob,
        comment="First!",
        followup=True,
        is_public=True,
    )
    alice = f"alice-{tag}@example.com"
    text = f"Es war einmal ({tag})"
    form = django_comments.get_form()(article)
    data = {"name": "Alice", "email": alice, "followup": True, "reply_to": 0, "level": 1}
    data.update({"order": 1, "comment": text, **form.initial})
    client = Client()
    posted = client.post(reverse("comments-post-comment"), data)
    if posted.status_code != 302:
        raise SystemExit(f"posting the comment answered {posted.status_code}")
    confirmation = _mail_to(alice, "comment confirmation request")
    if os.environ.get("REALAPP_KILL_FIRST_SENDER"):
        _settled(THREAD_JOB)  # acknowledged: a kill now loses nothing and repeats nothing
        first_sender.kill_once(int(confirmation["pid"]))
    link = CONFIRM.search(str(confirmation["body"]))
    if link is None:
        raise SystemExit(f"no confirmation link in {confirmation['body']!r}")
    confirmed = client.get(link.group(0))
    if confirmed.status_code != 302:
        raise SystemExit(f"confirming answered {confirmed.status_code}")
    followup = _mail_to(bob, "new comment posted")
    if text not in str(followup["body"]) or f"Post: Article {tag}" not in str(followup["body"]):
        raise SystemExit(f"the follow-up mail does not quote the comment: {followup['body']!r}")
    return {"confirmation": confirmation, "followup": followup}


def main(argv: list[str]) -> None:
    django.setup()
    if argv[:1] == ["migrate"]:
        migrate()
    elif argv[:1] == ["run"] and len(argv) == 2:
        print(json.dumps(run(argv[1])))
    else:
        raise SystemExit("usage: python -m comments_xtd_flow migrate | run TAG")


if __name__ == "__main__":
    main(sys.argv[1:])
