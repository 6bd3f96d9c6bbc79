"""Django's own mail calls: the message stays built in the request, a worker delivers it.

A site whose call is Django's mail API (``send_mail(...)``, ``EmailMessage(...).send()``,
``msg.send()``) needs none of its arguments stored: the rewrite hands the built
message to :mod:`queue_runtime.django_mail` (``django_mail.send_mail(...)``,
``django_mail.send(msg)``), which builds it exactly as Django does, in the request,
and queues only its delivery: a JSON copy of the message, one job per send, with a
Message-ID given in the request.
Templates are rendered, lazy strings forced and rows read where they were; the
worker needs no row of the request, so an uncommitted transaction (a test's
``TestCase``) does not hide anything from it.

Delivery is non-idempotent (a retry after the server took the mail sends it
again, with the same Message-ID), so it moves only when named: ``--job JOB`` for
the sites of one job, or ``--job queue_runtime.django_mail.deliver`` for every
Django mail call apply can move; and the gate keeps it inline until a load test
certifies ``queue_runtime.django_mail.deliver``. The rest of each site's checks
stay: a caller that reads the result (``sent = send_mail(...)``) or handles the
call's exceptions is a human's decision, and a call with a connection or
credentials of its own keeps them in the request.
"""

from __future__ import annotations

from codemods._project import module_name
from inventory.models import CallSite, Pattern

DELIVERY_JOB = "queue_runtime.django_mail.deliver"
MODULE = "queue_runtime"
NAME = "django_mail"
DROP_INS = ("queue_runtime.django_mail.",)
ALREADY = "already delivers through the queue (queue_runtime.django_mail)"

# Django's API as the scan resolves it -> the drop-in of queue_runtime.django_mail.
_SEND_MAIL = ("django.core.mail.send_mail",)
_SEND = tuple(
    f"django.core.mail.{where}{cls}.send"
    for where in ("", "message.")
    for cls in ("EmailMessage", "EmailMultiAlternatives")
)
_OWN_CONNECTION = frozenset({"connection", "auth_user", "auth_password"})


# Django's mail helpers with no drop-in: they build their message from settings inside Django.
NO_DROP_IN = (
    "django.core.mail.mail_admins",
    "django.core.mail.mail_managers",
    "django.core.mail.send_mass_mail",
)


def no_drop_in(site: CallSite) -> str | None:
    """Why a Django mail helper apply has no drop-in for stays in the request, else None."""
    if site.target_source not in NO_DROP_IN:
        return None
    name = site.target_source.rsplit(".", 1)[1]
    return (
        f"Django's {name}(): queue_runtime.django_mail has no drop-in for it (Django builds "
        "that message itself, from settings); it stays in the request"
    )


def patched_in_tests(site: CallSite, callee: str | None, tests: dict[str, str]) -> list[str]:
    """``path:line`` of each test that patches the name this call goes through.

    ``patch("pkg.views.send_mail")`` intercepts the call only while the module calls
    that name; the rewrite calls ``django_mail.send_mail`` and may drop the import,
    so the patch would raise or no longer intercept anything.
    """
    if callee is None:
        return []
    target = f"{module_name(site.location.path)}.{callee}"
    quoted = (f'"{target}"', f"'{target}'")
    return [
        f"{path}:{number}"
        for path, text in tests.items()
        if target in text
        for number, line in enumerate(text.splitlines(), 1)
        if any(q in line for q in quoted)
    ]


def drop_in(site: CallSite) -> str | None:
    """``send_mail`` / ``send`` when the site's call is Django's mail API, else None."""
    if site.pattern is not Pattern.DIRECT_CALL:
        return None
    if site.target_source in _SEND_MAIL:
        return "send_mail"
    if site.target_source in _SEND:
        return "send"
    return None


def named(site: CallSite, jobs: tuple[str, ...]) -> bool:
    """The user asked for this site's delivery: its job, or the delivery job, is named."""
    return site.job in jobs or DELIVERY_JOB in jobs


def reason(site: CallSite, jobs: tuple[str, ...]) -> str | None:
    """Why this Django mail call keeps its delivery in the request (None: it can move)."""
    own = sorted(_OWN_CONNECTION & {a.name for a in site.arguments})
    if own:
        given = ", ".join(f"`{name}=`" for name in own)
        return (
            f"the call passes a connection of its own ({given}): it stays with the request; "
            "a worker delivers through the project's email backend"
        )
    if not named(site, jobs):
        return (
            "Django mail: its delivery can move to a worker, the message still built here "
            "(queue_runtime.django_mail); delivery is non_idempotent, so it moves only when "
            f"named: --job {site.job} (or --job {DELIVERY_JOB} for every Django mail call)"
        )
    return None
