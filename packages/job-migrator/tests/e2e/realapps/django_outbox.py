"""Counts every mail a Django app sends, in whichever process sends it (its suite or a worker).

- In the suite (``-p django_outbox``): Django's test runner swaps in the locmem backend;
  each message it takes is also appended to ``$REALAPP_OUTBOX`` as one JSON line, with the
  process that sent it.
- In a worker: :class:`RecordingBackend` is the ``EMAIL_BACKEND`` (set by
  :mod:`django_worker_settings`); it records the same line and sends nothing.

A line holds the message as :mod:`queue_runtime.django_mail` carries it (``payload``), so
:mod:`django_bridge` can put the very message a worker sent into the suite's
``mail.outbox``. A replayed message (``REPLAYED`` set) was recorded by the worker that
sent it, and is not recorded again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.backends.locmem import EmailBackend as LocmemBackend

PROCESS = os.environ.get("REALAPP_PROCESS", "suite")
REPLAYED = "realapp_replayed"  # attribute of a message replayed from a worker's line


def line_of(message: Any) -> dict[str, object]:
    """What a mail is, for comparing runs: recipients, subject, body."""
    return {
        "to": sorted(message.recipients()),
        "subject": str(message.subject),
        "body": str(message.body),
    }


def record(messages: Sequence[Any]) -> None:
    from queue_runtime import django_mail

    path = os.environ.get("REALAPP_OUTBOX")
    if not path:
        return
    for message in messages:
        if getattr(message, REPLAYED, False):
            continue
        # Inside a backend the message holds the connection sending it (``send()`` set it):
        # what the message is does not depend on that.
        connection, message.connection = message.connection, None
        try:
            payload = django_mail.payload_of(message)
        finally:
            message.connection = connection
        line = {
            "process": PROCESS,
            "pid": os.getpid(),
            **line_of(message),
            "message_id": "" if isinstance(payload, str) else payload.message_id,
            "payload": None if isinstance(payload, str) else payload.model_dump(mode="json"),
        }
        with open(path, "a", encoding="utf-8") as out:  # one short append per mail: atomic
            out.write(json.dumps(line) + "\n")


class RecordingBackend(BaseEmailBackend):
    """A worker's backend: records each message, as a mail server would take it."""

    def send_messages(self, email_messages: Sequence[Any]) -> int:
        record(email_messages)
        return len(email_messages)


_locmem_send = LocmemBackend.send_messages


def _recorded_locmem(self: LocmemBackend, messages: Sequence[Any]) -> int:
    record(messages)
    return _locmem_send(self, messages)


LocmemBackend.send_messages = _recorded_locmem  # type: ignore[method-assign]
