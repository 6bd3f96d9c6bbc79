"""Django mail through the queue: the message is built in the request, a worker delivers it.

``migrator apply`` rewrites a Django app's own mail calls to these drop-ins::

    send_mail(subject, body, None, [user.email])   ->  django_mail.send_mail(subject, body, None, [user.email])
    EmailMessage(subject, body, to=[a]).send()     ->  django_mail.send(EmailMessage(subject, body, to=[a]))
    msg.send()                                     ->  django_mail.send(msg)

The caller still builds the message exactly as before: the same arguments reach
Django's own ``EmailMessage`` in the request, templates are rendered there, lazy
translations are forced there, in the request's active language. Only the
delivery (the SMTP conversation, the slow and failing part) becomes a job,
:func:`deliver`, whose payload is the built message as JSON (:class:`MailMessage`):
subject, body, addresses, headers, alternatives and attachments. Nothing of the
request (no model, no request object, no lazy string) is stored, so the
arguments need not be JSON, and the worker needs no row the request wrote.

Each send is one delivery job, as each ``msg.send()`` was one send: the same
message object sent twice (a loop that changes ``msg.to`` and sends again) is two
jobs. The payload gets a ``Message-ID`` in the request (unless the message has
one; the caller's message is not changed), so a retry after a worker died sends
the same ``Message-ID``, which receiving servers use to drop the copy. Delivery
is still registered as ``non_idempotent``: the gate keeps it inline (sent in the
caller, as before) until a load test certifies it.

A message the payload cannot carry is sent here, as before, and never lost: a
subclass of Django's classes (it may override how it is built), a connection
of its own (``connection=``, ``auth_user=``, ``auth_password=``), an
attachment that is a MIME object or a message, non-text headers, or one over
the queue's payload limit. Each is logged once per reason
(``queue_runtime.django_mail``).
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from queue_runtime.errors import PayloadTooLarge
from queue_runtime.handle import InlineHandle, JobHandle
from queue_runtime.jobs import job

log = logging.getLogger("queue_runtime.django_mail")

JOB_NAME = "queue_runtime.django_mail.deliver"
_KINDS = ("EmailMessage", "EmailMultiAlternatives")
_warned: set[str] = set()


class Alternative(BaseModel):
    """One alternative body (``attach_alternative(content, mimetype)``)."""

    content: str
    mimetype: str


class Attachment(BaseModel):
    """One attachment: text as it is, bytes in base64 (``binary``)."""

    filename: str | None = None
    content: str
    binary: bool = False
    mimetype: str | None = None

    def value(self) -> str | bytes:
        return base64.b64decode(self.content) if self.binary else self.content


class MailMessage(BaseModel):
    """A Django ``EmailMessage`` / ``EmailMultiAlternatives`` as it was built in the request."""

    kind: str = Field(pattern="^(EmailMessage|EmailMultiAlternatives)$")
    subject: str
    body: str
    from_email: str
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    bcc: list[str] = Field(default_factory=list)
    reply_to: list[str] = Field(default_factory=list)
    headers: dict[str, str] = Field(default_factory=dict)
    alternatives: list[Alternative] = Field(default_factory=list)
    attachments: list[Attachment] = Field(default_factory=list)
    content_subtype: str = "plain"
    mixed_subtype: str = "mixed"
    alternative_subtype: str = "alternative"
    encoding: str | None = None
    fail_silently: bool = False

    @property
    def message_id(self) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == "message-id"), "")


@job(name=JOB_NAME, idempotency="non_idempotent")
def deliver(message: MailMessage) -> int:
    """Send one built message through the project's email backend (what ``msg.send()`` returns)."""
    return int(rebuild(message).send(fail_silently=message.fail_silently))


def send_mail(
    subject: Any,
    message: Any,
    from_email: Any,
    recipient_list: Any,
    fail_silently: bool = False,
    auth_user: str | None = None,
    auth_password: str | None = None,
    connection: Any = None,
    html_message: Any = None,
) -> JobHandle | int:
    """``django.core.mail.send_mail``, delivered by a worker: the job's handle.

    The message is built as Django builds it (an ``EmailMultiAlternatives``,
    ``html_message`` as its ``text/html`` alternative). With a connection or
    credentials of the caller's own it is sent here, as Django would, and the
    number sent is returned.
    """
    from django.core import mail

    if connection is not None or auth_user is not None or auth_password is not None:
        _note("a connection or credentials of the caller's own: sent in the caller")
        return int(
            mail.send_mail(
                subject,
                message,
                from_email,
                recipient_list,
                fail_silently=fail_silently,
                auth_user=auth_user,
                auth_password=auth_password,
                connection=connection,
                html_message=html_message,
            )
        )
    built = mail.EmailMultiAlternatives(subject, message, from_email, recipient_list)
    if html_message:
        built.attach_alternative(html_message, "text/html")
    return send(built, fail_silently=fail_silently)


def send(msg: Any, fail_silently: bool = False) -> JobHandle | int:
    """``msg.send(fail_silently)``, delivered by a worker: the job's handle.

    A message with no recipients is not queued (Django sends nothing: 0). One
    the payload cannot carry is sent here, as before: what ``msg.send()`` returns.
    While the gate keeps delivery inline the message is sent here, and a failure
    raises here, as ``msg.send()`` raised (unless ``fail_silently``): the caller's
    ``except`` and an enclosing transaction's rollback behave as before.
    """
    if not msg.recipients():
        return 0
    payload = payload_of(msg, fail_silently)
    if isinstance(payload, str):
        _note(payload)
        return int(msg.send(fail_silently=fail_silently))
    try:
        handle = deliver.enqueue(payload)
    except PayloadTooLarge as exc:
        _note(f"over the queue's payload limit ({exc}): sent in the caller")
        return int(msg.send(fail_silently=fail_silently))
    if isinstance(handle, InlineHandle) and handle.error is not None:
        raise handle.error  # sent in the caller, and failed there: as msg.send() would have
    return handle


def payload_of(msg: Any, fail_silently: bool = False) -> MailMessage | str:
    """The message as a payload, or why it cannot be one (then it is sent where it is).

    The payload's headers get a fresh ``Message-ID`` when the message has none; the
    message itself is left as it is (sent again, it is another mail, with another id).
    """
    from django.core.mail import EmailMessage, EmailMultiAlternatives
    from django.core.mail.message import make_msgid
    from django.core.mail.utils import DNS_NAME

    kind = type(msg).__name__
    if type(msg) not in (EmailMessage, EmailMultiAlternatives):
        return f"a {kind}, not Django's own message class: sent in the caller"
    if msg.connection is not None:
        return "a connection of the message's own: sent in the caller"
    headers = {str(k): v for k, v in msg.extra_headers.items()}
    if not all(isinstance(v, str) for v in headers.values()):
        return "a header whose value is not text: sent in the caller"
    if not any(k.lower() == "message-id" for k in headers):
        headers["Message-ID"] = make_msgid(domain=DNS_NAME)
    if msg.encoding is not None and not isinstance(msg.encoding, str):
        return "an encoding that is a Charset object: sent in the caller"
    attachments = [_attachment(a) for a in msg.attachments]
    if any(isinstance(a, str) for a in attachments):
        return next(a for a in attachments if isinstance(a, str))
    addresses = {f: getattr(msg, f) for f in ("to", "cc", "bcc", "reply_to")}
    if not all(isinstance(a, str) for found in addresses.values() for a in found):
        return "an address that is not text: sent in the caller"
    alternatives = getattr(msg, "alternatives", [])
    if not all(isinstance(content, str) for content, _ in alternatives):
        return "an alternative that is not text: sent in the caller"
    try:
        return _payload(msg, kind, headers, attachments, addresses, alternatives, fail_silently)
    except ValidationError as exc:  # an attribute of a type Django would not send either
        return f"a message the payload cannot describe ({exc.error_count()} error(s)): sent in the caller"


def _payload(
    msg: Any,
    kind: str,
    headers: dict[str, str],
    attachments: list[Any],
    addresses: dict[str, Any],
    alternatives: list[Any],
    fail_silently: bool,
) -> MailMessage:
    return MailMessage(
        kind=kind,
        subject=str(msg.subject),  # a lazy or safe string, forced in the request's language
        body=str(msg.body),
        from_email=str(msg.from_email),
        **{field: [str(a) for a in found] for field, found in addresses.items()},
        headers=headers,
        alternatives=[Alternative(content=str(c), mimetype=str(t)) for c, t in alternatives],
        attachments=attachments,
        content_subtype=msg.content_subtype,
        # Django 6 dropped both attributes (setting one fails the send): the defaults then.
        mixed_subtype=getattr(msg, "mixed_subtype", "mixed"),
        alternative_subtype=getattr(msg, "alternative_subtype", "alternative"),
        encoding=msg.encoding,
        fail_silently=fail_silently,
    )


def rebuild(message: MailMessage) -> Any:
    """The Django message a payload describes (worker side)."""
    from django.core.mail import EmailMessage, EmailMultiAlternatives

    cls = EmailMultiAlternatives if message.kind == "EmailMultiAlternatives" else EmailMessage
    msg = cls(
        subject=message.subject,
        body=message.body,
        from_email=message.from_email,
        to=message.to,
        cc=message.cc,
        bcc=message.bcc,
        reply_to=message.reply_to,
        headers=dict(message.headers),
    )
    for alternative in message.alternatives:
        msg.attach_alternative(alternative.content, alternative.mimetype)
    for attachment in message.attachments:
        msg.attach(attachment.filename, attachment.value(), attachment.mimetype)
    msg.content_subtype = message.content_subtype
    # Only a subtype other than the default is set: Django 6 refuses to send a message that
    # has either attribute at all (it dropped them), and older Django has the same defaults.
    if message.mixed_subtype != "mixed":
        msg.mixed_subtype = message.mixed_subtype
    if isinstance(msg, EmailMultiAlternatives) and message.alternative_subtype != "alternative":
        msg.alternative_subtype = message.alternative_subtype
    msg.encoding = message.encoding
    return msg


def _attachment(found: Any) -> Attachment | str:
    """One of ``msg.attachments`` (a ``(filename, content, mimetype)`` tuple), or why not."""
    if not isinstance(found, tuple) or len(found) != 3:
        return "an attachment that is a MIME object: sent in the caller"
    filename, content, mimetype = found
    if filename is not None and not isinstance(filename, str):
        return "an attachment whose file name is not text: sent in the caller"
    if isinstance(content, bytes):
        encoded = base64.b64encode(content).decode("ascii")
        return Attachment(filename=filename, content=encoded, binary=True, mimetype=mimetype)
    if isinstance(content, str):
        return Attachment(filename=filename, content=content, mimetype=mimetype)
    return "an attachment that is a message or an object: sent in the caller"


def _note(reason: str) -> None:
    """Say once per reason that a message was sent in the caller rather than queued."""
    if reason not in _warned:
        _warned.add(reason)
        log.warning("django_mail: %s", reason)
