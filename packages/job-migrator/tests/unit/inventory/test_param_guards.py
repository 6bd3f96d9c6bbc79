"""A call its function makes only under a flag the caller leaves out is not the caller's.

``def enqueue_job(job, synchronous=False)`` runs the job in the caller only under
``if synchronous:`` and enqueues it otherwise; a view that calls ``enqueue_job(job)`` never
runs it inline (found on the census: nautobot's 24 views of ``JobResult.enqueue_job``). A
view that passes the flag, by name, by position, or through ``**options``, still does,
unless what it passes is a falsy literal (``synchronous=False``, ``None``, ``0``, ``""``,
which the branch reads as a false default). The flag may be one term of an ``and``
(``if urgent and mail:``), or the test of an early exit in the function's own body
(``if not mail: return``), after which the rest runs only when it is set; and
``if mail is not None:`` (or ``if mail is None: return``) is left only by ``None``, the
default or passed, never by another false value. A view still
reaches the work where the flag's default is true, where the same work is also reached on
a path no flag guards (a reply's mail beside a mention's), where the callee rebinds it before the test, or where the work is written outside the ``if`` (or
after an exit inside a loop, which an empty loop never takes).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

JOBS = """\
from celery import shared_task
from django.core.mail import send_mail


@shared_task
def run_report(pk):
    send_mail("Report", str(pk), "a@example.com", ["b@example.com"])


def enqueue_report(pk, synchronous=False):
    if synchronous:
        run_report.apply((pk,))
    else:
        run_report.delay(pk)


def enqueue_report_eager(pk, synchronous=True):
    if synchronous:
        run_report.apply((pk,))
    else:
        run_report.delay(pk)


def enqueue_report_rebound(pk, synchronous=False):
    synchronous = synchronous or pk == 0
    if synchronous:
        run_report.apply((pk,))
    else:
        run_report.delay(pk)


class Report:
    @classmethod
    def queue_up(cls, pk, *args, synchronous=False):
        if synchronous:
            run_report.apply((pk,))
        else:
            run_report.delay(pk)

    def run(self, pk, now=False):
        if now:
            run_report.apply((pk,))


def notify(pk, mail=None):
    if mail:
        send_mail("Done", str(pk), "a@example.com", [mail])
    return pk


def notify_both(pk, mail=None, urgent=True):
    if urgent and mail:
        send_mail("Urgent", str(pk), "a@example.com", [mail])


def notify_or_leave(pk, mail=None):
    print("notify", pk)
    if not mail:
        return pk
    send_mail("Done", str(pk), "a@example.com", [mail])
    return pk


def notify_or_raise(pk, mail=None):
    if not mail:
        raise ValueError("no address")
    send_mail("Done", str(pk), "a@example.com", [mail])


def notify_each(pks, mail=None):
    for pk in pks:
        if not mail:
            return
    send_mail("Done", "all", "a@example.com", ["b@example.com"])


def mail_comment(pk):
    send_mail("Comment", str(pk), "a@example.com", ["b@example.com"])


def a_mention(pk):
    mail_comment(pk)


def z_reply(pk):
    mail_comment(pk)


def comment_posted(pk, mentions=None):
    z_reply(pk)
    if mentions:
        a_mention(pk)


def comment_posted_first(pk, mentions=None):
    if mentions:
        z_reply(pk)
    a_mention(pk)


def notify_given(pk, mail=None):
    if mail is not None:
        send_mail("Done", str(pk), "a@example.com", [mail])


def notify_or_skip(pk, mail=None):
    if mail is None:
        return
    send_mail("Done", str(pk), "a@example.com", [mail])


def notify_given_false(pk, mail=False):
    if mail is not None:
        send_mail("Done", str(pk), "a@example.com", [mail])


def notify_unless(pk, mail=None):
    if mail:
        return
    send_mail("Done", str(pk), "a@example.com", ["b@example.com"])
"""

URLS = (
    "from django.urls import path\n\n"
    "from app.views import report\n\n"
    'urlpatterns = [path("report/<int:pk>", report)]\n'
)


def views(call: str) -> str:
    return (
        "from django.http import HttpResponse\n\n"
        "from app import jobs\n\n\n"
        "def report(request, pk: int, **options):\n"
        f"    {call}\n"
        "    return HttpResponse()\n"
    )


def direct_sites(scan_project: Scanner, call: str) -> list[str]:
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/jobs.py": JOBS,
            "app/views.py": views(call),
            "app/urls.py": URLS,
        }
    )
    return [
        s.job
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL and s.location.path == "app/views.py"
    ]


@pytest.mark.parametrize(
    "call",
    [
        "jobs.enqueue_report(pk)",
        "jobs.enqueue_report(pk=pk)",
        "jobs.notify(pk)",
        "jobs.Report.queue_up(pk, 1, 2)",  # keyword-only: no position passes it
        "jobs.Report().run(pk)",
        # a falsy literal passed reads as false as a false default does
        "jobs.enqueue_report(pk, synchronous=False)",
        "jobs.enqueue_report(pk, False)",
        "jobs.enqueue_report_eager(pk, synchronous=False)",  # the true default not used
        "jobs.enqueue_report_eager(pk, 0)",
        'jobs.notify(pk, "")',
        "jobs.notify(pk, mail=None)",
        "jobs.Report.queue_up(pk, synchronous=False)",
        "jobs.Report().run(pk, False)",
        "jobs.Report().run(pk, now=None)",
        # the flag one term of an ``and``; an early exit unless it is set
        "jobs.notify_both(pk)",
        "jobs.notify_both(pk, None, True)",
        "jobs.notify_or_leave(pk)",
        "jobs.notify_or_raise(pk, mail=None)",
        # ``is not None``: left at its None default, or passed None
        "jobs.notify_given(pk)",
        "jobs.notify_given(pk, None)",
        "jobs.notify_or_skip(pk)",
        "jobs.notify_or_skip(pk, mail=None)",
    ],
)
def test_a_flag_left_at_its_false_default_reaches_nothing_under_it(
    scan_project: Scanner, call: str
) -> None:
    assert direct_sites(scan_project, call) == []


@pytest.mark.parametrize(
    ("call", "job"),
    [
        ("jobs.enqueue_report(pk, synchronous=True)", "app.jobs.enqueue_report"),
        ("jobs.enqueue_report(pk, True)", "app.jobs.enqueue_report"),
        ("jobs.enqueue_report(pk, **options)", "app.jobs.enqueue_report"),
        ("jobs.enqueue_report_eager(pk)", "app.jobs.enqueue_report_eager"),
        ("jobs.enqueue_report_rebound(pk)", "app.jobs.enqueue_report_rebound"),
        ("jobs.notify(pk, request.user.email)", "app.jobs.notify"),
        ("jobs.Report.queue_up(pk, synchronous=True)", "app.jobs.Report.queue_up"),
        ("jobs.Report().run(pk, True)", "app.jobs.Report.run"),
        # any value not a falsy literal may be true: a name, a non-empty literal, 1
        ("jobs.enqueue_report(pk, synchronous=pk > 3)", "app.jobs.enqueue_report"),
        ("jobs.enqueue_report(pk, 1)", "app.jobs.enqueue_report"),
        ('jobs.notify(pk, "ops@example.com")', "app.jobs.notify"),
        ("jobs.enqueue_report_eager(pk, synchronous=request.GET)", "app.jobs.enqueue_report_eager"),
        # unbound, the first argument is the instance: the flag's place is unclear, kept
        ("jobs.Report.run(jobs.Report(), pk, False)", "app.jobs.Report.run"),
        ("jobs.notify_both(pk, request.user.email)", "app.jobs.notify_both"),
        ("jobs.notify_or_leave(pk, request.user.email)", "app.jobs.notify_or_leave"),
        ("jobs.notify_or_raise(pk, mail=request.user.email)", "app.jobs.notify_or_raise"),
        # ``is not None`` passes for any other value, a false one or a false default
        ("jobs.notify_given(pk, False)", "app.jobs.notify_given"),
        ('jobs.notify_given(pk, mail="")', "app.jobs.notify_given"),
        ("jobs.notify_given(pk, request.user.email)", "app.jobs.notify_given"),
        ("jobs.notify_or_skip(pk, 0)", "app.jobs.notify_or_skip"),
        ("jobs.notify_given_false(pk)", "app.jobs.notify_given_false"),
        # the mail is also sent on a path no flag guards (a reply beside a mention)
        ("jobs.comment_posted(pk)", "app.jobs.comment_posted"),
        ("jobs.comment_posted(pk, mentions=None)", "app.jobs.comment_posted"),
        ("jobs.comment_posted_first(pk)", "app.jobs.comment_posted_first"),
        # the exit is inside a loop: with no pks the mail goes out whatever the flag
        ("jobs.notify_each([pk])", "app.jobs.notify_each"),
        # the exit is taken when the flag is set: the mail is sent when it is not
        ("jobs.notify_unless(pk)", "app.jobs.notify_unless"),
    ],
)
def test_a_flag_that_may_be_set_keeps_what_runs_under_it(
    scan_project: Scanner, call: str, job: str
) -> None:
    assert direct_sites(scan_project, call) == [job]


RECEIVER = """\
from django.core.mail import send_mail
from django.db import models
from django.db.models.signals import post_delete


class Rep(models.Model):
    email = models.EmailField()

    def delete(self, *args, **kwargs):
        super().delete(*args, **kwargs)


def rep_removed(sender, instance=None, **kwargs):
    if instance:
        send_mail("Removed", "...", "a@example.com", [instance.email])


def init_signals():
    post_delete.connect(rep_removed, sender=Rep)
"""


def test_a_receiver_gets_its_flag_from_the_signal_not_from_the_call_that_fires_it(
    scan_project: Scanner,
) -> None:
    """``rep.delete()`` passes no ``instance``, but Django's signal hands the receiver one:
    only a call written as a call of the function tells which arguments it gets."""
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/models.py": RECEIVER,
            "app/apps.py": (
                "from django.apps import AppConfig\n\n\n"
                "class ShopConfig(AppConfig):\n"
                '    name = "app"\n\n'
                "    def ready(self):\n"
                "        from app.models import init_signals\n\n"
                "        init_signals()\n"
            ),
            "app/views.py": (
                "from django.http import HttpResponse\n\n"
                "from app.models import Rep\n\n\n"
                "def report(request, pk: int):\n"
                "    Rep.objects.get(pk=pk).delete()\n"
                "    return HttpResponse()\n"
            ),
            "app/urls.py": URLS,
        }
    )
    sites = [s.job for s in inventory.sites if s.location.path == "app/views.py"]
    assert sites == ["app.models.rep_removed"], [(s.location, s.job) for s in inventory.sites]


def test_the_callee_alone_keeps_every_branch(scan_project: Scanner) -> None:
    """The flag is decided per call: the function's own verdict still counts the mail it
    may send (another caller may pass the flag)."""
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/jobs.py": JOBS,
            "app/views.py": views("jobs.enqueue_report(pk, synchronous=True)"),
            "app/urls.py": URLS,
        }
    )
    job = inventory.job("app.jobs.enqueue_report")
    assert job is not None and job.idempotency is Idempotency.NON_IDEMPOTENT
    assert any("send_mail" in e.message for e in job.evidence)


SPLIT = """\
from django.core.mail import send_mail


def mail_now(pk):
    send_mail("Now", str(pk), "a@example.com", ["b@example.com"])


SENDERS = {"now": mail_now}


def remind(pk, kind, now=False):
    if now:
        mail_now(pk)
    SENDERS[kind](pk)
"""


def test_a_function_reached_both_under_the_flag_and_otherwise_stays_the_callers(
    scan_project: Scanner,
) -> None:
    """``remind`` runs ``mail_now`` under ``if now:`` and, whatever the flag, through its
    table of senders: leaving the flag out removes only the first path, not the mail."""
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/jobs.py": SPLIT,
            "app/views.py": views('jobs.remind(pk, "now")'),
            "app/urls.py": URLS,
        }
    )
    sites = [
        s.job
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL and s.location.path == "app/views.py"
    ]
    assert sites == ["app.jobs.remind"], [(s.location, s.job) for s in inventory.sites]
