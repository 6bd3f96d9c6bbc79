"""Django's own mail calls: the message stays built in the request, its delivery moves.

The tree is scanned by the real scanner; apply then rewrites each Django mail call
whose job is named (or ``queue_runtime.django_mail.deliver`` for all of them) to
``queue_runtime.django_mail``'s drop-in, with its arguments untouched: they need not
be storable, only the built message is. What still keeps a call in the request: a
caller that reads the result, a handler of its exceptions (around the call, or
around the job's own callers when the call is inside the job), a connection of its
own, or not being named.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import ApplyOptions, Status, plan_apply
from inventory import scan

DELIVER = "queue_runtime.django_mail.deliver"

VIEWS = """from django.core.mail import EmailMessage, EmailMultiAlternatives, send_mail
from django.core import mail
from django.http import HttpResponse
from django.template.loader import render_to_string


def contact(request):
    send_mail("Hi", render_to_string("body.txt", {"r": request}), None, [request.POST["to"]])
    return HttpResponse("ok")


def invite(request):
    EmailMessage("Hi", "body", to=[request.POST["email"]]).send()
    return HttpResponse("ok")


def welcome(request):
    msg = EmailMultiAlternatives("Hi", "body", to=["c@example.org"])
    msg.attach_alternative("<p>x</p>", "text/html")
    msg.send(fail_silently=True)
    return HttpResponse("ok")


def counted(request):
    sent = send_mail("Hi", "b", None, ["d@example.org"])
    return HttpResponse(str(sent))


def handled(request):
    try:
        mail.send_mail("Hi", "b", None, ["e@example.org"])
    except OSError:
        return HttpResponse("the mail server is down", status=503)
    return HttpResponse("ok")


def connected(request):
    send_mail("Hi", "b", None, ["f@example.org"], connection=mail.get_connection())
    return HttpResponse("ok")
"""

HELPERS = """from django.core.mail import send_mail


def email_link(request, email):
    send_mail("Your link", "https://example.org/" + request.path, None, [email])
"""

LOGIN = """from django.contrib import messages
from django.http import HttpResponse

from site_app.helpers import email_link


def login(request):
    try:
        email_link(request, request.POST["email"])
    except Exception:
        messages.error(request, "There was an error sending the email.")
    return HttpResponse("ok")
"""


@pytest.fixture
def root(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files(
        {
            "site_app/__init__.py": "",
            "site_app/views.py": VIEWS,
            "site_app/helpers.py": HELPERS,
            "site_app/login.py": LOGIN,
        }
    )


def _outcomes(root: Path, *jobs: str) -> dict[int | str, tuple[Status, str]]:
    result = plan_apply(root, scan(root), ApplyOptions(allow_dirty=True, jobs=jobs), scanner=None)
    found: dict[int | str, tuple[Status, str]] = {}
    for o in result.outcomes:
        key = (
            o.site.location.line
            if o.site.location.path.endswith("views.py")
            else o.site.location.path
        )
        found[key] = (o.status, o.reason)
    return found


def _views(root: Path, *jobs: str) -> str:
    result = plan_apply(root, scan(root), ApplyOptions(allow_dirty=True, jobs=jobs), scanner=None)
    (change,) = [c for c in result.changes if c.path == "site_app/views.py"]
    return change.after


def test_named_by_the_delivery_job_every_movable_call_hands_its_message_over(root: Path) -> None:
    after = _views(root, DELIVER)
    ast.parse(after)
    assert (
        'django_mail.send_mail("Hi", render_to_string("body.txt", {"r": request}), None, [request.POST["to"]])'
        in after
    )
    assert 'django_mail.send(EmailMessage("Hi", "body", to=[request.POST["email"]]))' in after
    assert "django_mail.send(msg, fail_silently=True)" in after
    assert "from queue_runtime import django_mail" in after
    # what stays: the counted result, the handled failure, the caller's own connection
    assert 'sent = send_mail("Hi", "b", None, ["d@example.org"])' in after
    assert '        mail.send_mail("Hi", "b", None, ["e@example.org"])' in after
    assert "connection=mail.get_connection())" in after
    assert "from django.core import mail" in after  # still used


def test_each_call_that_stays_says_why(root: Path) -> None:
    found = _outcomes(root, DELIVER)
    lines = {
        n: VIEWS.splitlines().index(text) + 1
        for n, text in {
            "contact": '    send_mail("Hi", render_to_string("body.txt", {"r": request}), None, [request.POST["to"]])',
            "counted": '    sent = send_mail("Hi", "b", None, ["d@example.org"])',
            "handled": '        mail.send_mail("Hi", "b", None, ["e@example.org"])',
            "connected": '    send_mail("Hi", "b", None, ["f@example.org"], connection=mail.get_connection())',
        }.items()
    }
    status, reason = found[lines["contact"]]
    assert status is Status.REWRITTEN and "a worker sends it" in reason
    status, reason = found[lines["counted"]]
    assert status is Status.MANUAL and "the number of mails sent is not known here" in reason
    status, reason = found[lines["handled"]]
    assert status is Status.MANUAL and "except clause(s) at line(s)" in reason
    status, reason = found[lines["connected"]]
    assert status is Status.SKIPPED and "`connection=`" in reason


def test_inside_a_helper_whose_caller_reports_a_failed_send_it_stays_manual(root: Path) -> None:
    """``try: email_link(...) except Exception: messages.error(...)``: the user is told when
    the mail fails. Delivered by a worker, the send cannot fail there any more."""
    found = _outcomes(root, DELIVER)
    status, reason = found["site_app/helpers.py"]
    assert status is Status.MANUAL
    assert "site_app.helpers.email_link's call at site_app/login.py:" in reason


def test_not_named_nothing_moves_and_the_reason_says_how(root: Path) -> None:
    result = plan_apply(root, scan(root), ApplyOptions(allow_dirty=True), scanner=None)
    assert result.changes == []
    contact = next(o for o in result.outcomes if o.site.job == "site_app.views.contact")
    assert contact.status is Status.SKIPPED
    assert "--job site_app.views.contact" in contact.reason and DELIVER in contact.reason


def test_named_by_its_own_job_only_that_job_moves(root: Path) -> None:
    result = plan_apply(
        root,
        scan(root),
        ApplyOptions(allow_dirty=True, jobs=("site_app.views.invite",)),
        scanner=None,
    )
    assert result.jobs == ["site_app.views.invite"]
    (change,) = result.changes
    assert "django_mail.send(EmailMessage(" in change.after
    assert 'send_mail("Hi", render_to_string(' in change.after  # contact: not named
    assert "@job" not in change.after  # the delivery job is the runtime's; the view is no job
    assert "queue-runtime worker queue_runtime.django_mail" in result.worker


def test_a_second_run_finds_the_calls_already_delivered(root: Path) -> None:
    first = plan_apply(
        root, scan(root), ApplyOptions(allow_dirty=True, jobs=(DELIVER,)), scanner=None
    )
    for change in first.changes:
        (root / change.path).write_text(change.after)
    again = plan_apply(
        root, scan(root), ApplyOptions(allow_dirty=True, jobs=(DELIVER,)), scanner=None
    )
    assert again.changes == []


ALIASED = """from django.conf import settings
from django.core.mail import send_mail as django_send_mail


def notify(request, feedback):
    django_send_mail("[%s] Feedback" % request.get_host(), feedback.comment, None, [settings.ADMIN])
"""


def test_an_aliased_import_is_followed_and_goes_once_unused(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """tellme: ``send_mail as django_send_mail`` inside a function of a request and a model."""
    root = write_files({"fb/__init__.py": "", "fb/mail.py": ALIASED})
    result = plan_apply(
        root, scan(root), ApplyOptions(allow_dirty=True, jobs=("fb.mail.notify",)), scanner=None
    )
    (change,) = result.changes
    ast.parse(change.after)
    assert "    django_mail.send_mail(" in change.after
    assert "django_send_mail" not in change.after  # the alias's import went with its last use
    assert "from queue_runtime import django_mail" in change.after


def test_the_pr_text_says_what_moved_of_a_job_whose_mail_is_delivered(root: Path) -> None:
    from codemods._changes import pr

    inventory = scan(root)
    jobs = ("site_app.views.invite",)
    result = plan_apply(root, inventory, ApplyOptions(allow_dirty=True, jobs=jobs), scanner=None)
    text = pr.render("mail", result.jobs, result, inventory)
    assert text.startswith("# Deliver the Django mail of 1 job(s) from queue_runtime workers")
    assert "## Django mail: built in the request, delivered by a worker" in text
    assert "`site_app.views.invite` is not moved: it still runs in the request" in text
    assert "execution guard" not in text  # the view is not registered: nothing to guard
    assert "`job.enqueue(...)` on the same name" not in text  # not what these calls became
    assert "Django mail calls deliver through queue_runtime" in text


SIGNUP = """from django.core.mail import EmailMessage, mail_admins, send_mail
from django.db import transaction
from django.http import HttpResponse


@transaction.atomic(durable=True)
def verify(request, user):
    mail = EmailMessage("Verify", "link", to=[user.email])
    mail.send()  # decorated
    return user


def signup(request):
    with transaction.atomic():
        send_mail("Welcome", "b", None, ["w@example.org"])  # in a block
    return HttpResponse("ok")


def register(request):
    verify(request, request.user)
    return HttpResponse("ok")


def magic(request):
    send_mail("Your link", "b", None, ["m@example.org"])  # patched
    return HttpResponse("ok")


def alert(request):
    mail_admins("Alert", "b")  # admins
    return HttpResponse("ok")
"""

PATCHING_TEST = """from unittest.mock import patch


def test_magic(client):
    with patch("acct.views.send_mail") as sent:
        client.get("/magic/")
    sent.assert_called_once()
"""


def test_inside_a_transaction_a_patched_name_or_a_helper_without_drop_in_stays(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = write_files(
        {
            "acct/__init__.py": "",
            "acct/views.py": SIGNUP,
            "acct/tests/__init__.py": "",
            "acct/tests/test_views.py": PATCHING_TEST,
        }
    )
    result = plan_apply(
        root, scan(root), ApplyOptions(allow_dirty=True, jobs=(DELIVER,)), scanner=None
    )
    lines = SIGNUP.splitlines()
    by_line = {o.site.location.line: o for o in result.outcomes}

    def at(marker: str):  # type: ignore[no-untyped-def]
        return by_line[next(n for n, t in enumerate(lines, 1) if f"# {marker}" in t)]

    decorator = next(n for n, t in enumerate(lines, 1) if t.startswith("@transaction.atomic"))
    with_line = next(n for n, t in enumerate(lines, 1) if "with transaction.atomic()" in t)
    decorated, block = at("decorated"), at("in a block")
    assert (
        decorated.status is Status.MANUAL
        and f"transaction.atomic (line(s) {decorator})" in decorated.reason
    )
    assert (
        block.status is Status.MANUAL
        and f"transaction.atomic (line(s) {with_line})" in block.reason
    )
    patched = at("patched")
    assert patched.status is Status.MANUAL
    assert (
        "the tests patch the name this call goes through (acct/tests/test_views.py:5)"
        in patched.reason
    )
    admins = at("admins")
    assert admins.status is Status.SKIPPED and "no drop-in for it" in admins.reason
    assert result.changes == []


def test_branch_commit_names_the_delivery_not_a_move_of_the_view(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    import subprocess

    from codemods import create_branches

    root = write_files({"fb/__init__.py": "", "fb/mail.py": ALIASED})

    def git(*args: str) -> str:
        ident = ["-c", "user.email=d@e", "-c", "user.name=D"]
        done = subprocess.run(
            ["git", *ident, *args], cwd=root, check=True, capture_output=True, text=True
        )
        return done.stdout

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "app")
    options = ApplyOptions(jobs=("fb.mail.notify",))
    result, reports = create_branches(root, scan(root), "mail", options, scanner=None)
    assert result.jobs == ["fb.mail.notify"] and reports
    subject = git("log", "-1", "--format=%s", reports[0].name).strip()
    assert subject == "Deliver the Django mail of fb.mail.notify from queue_runtime workers"
    assert "django_mail.send_mail(" in git("show", f"{reports[0].name}:fb/mail.py")


ATOMIC_VIEWS = """from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpResponse


def join(request):
    send_mail("Welcome", "b", None, ["j@example.org"])  # in a request
    return HttpResponse("ok")


@transaction.non_atomic_requests
def leave(request):
    send_mail("Bye", "b", None, ["l@example.org"])  # opted out
    return HttpResponse("ok")
"""


@pytest.mark.parametrize(
    ("settings", "on"),
    [
        ('DATABASES = {"default": {"ENGINE": "x", "ATOMIC_REQUESTS": True}}\n', 3),
        ('DATABASES = {"default": dict(ENGINE="x", ATOMIC_REQUESTS=env("ATOMIC"))}\n', 3),
        (
            'DATABASES = {"default": {"ENGINE": "x"}}\nDATABASES["default"]["ATOMIC_REQUESTS"] = 1\n',
            4,
        ),
        ('OFF = False\nDATABASES = {"default": {"ENGINE": "x", "ATOMIC_REQUESTS": OFF}}\n', None),
        ('DATABASES = {"default": {"ENGINE": "x", "ATOMIC_REQUESTS": False}}\n', None),
    ],
    ids=["literal", "from-the-environment", "assigned-later", "a-name-for-false", "off"],
)
def test_atomic_requests_in_the_settings_keeps_a_view_s_mail_in_the_request(
    write_files: Callable[[dict[str, str]], Path], settings: str, on: int | None
) -> None:
    """Every view runs in atomic: a failed send rolled the request's writes back, and
    from a worker it could not. A view marked non_atomic_requests still moves."""
    root = write_files(
        {
            "club/__init__.py": "",
            "club/views.py": ATOMIC_VIEWS,
            "config/__init__.py": "",
            "config/settings.py": "from environ import env\n\n" + settings,
        }
    )
    result = plan_apply(
        root, scan(root), ApplyOptions(allow_dirty=True, jobs=(DELIVER,)), scanner=None
    )
    lines = ATOMIC_VIEWS.splitlines()
    by_line = {o.site.location.line: o for o in result.outcomes}
    moved = {o.site.location.line for o in result.by_status(Status.REWRITTEN)}
    joined = next(n for n, t in enumerate(lines, 1) if "# in a request" in t)
    left = next(n for n, t in enumerate(lines, 1) if "# opted out" in t)
    assert left in moved
    if on is None:
        assert joined in moved
        return
    kept = by_line[joined]
    assert kept.status is Status.MANUAL
    assert f"ATOMIC_REQUESTS is on (config/settings.py:{on})" in kept.reason
    assert "non_atomic_requests" in kept.reason
    (change,) = result.changes
    assert 'send_mail("Welcome", "b", None, ["j@example.org"])' in change.after
    assert 'django_mail.send_mail("Bye", "b", None, ["l@example.org"])' in change.after
