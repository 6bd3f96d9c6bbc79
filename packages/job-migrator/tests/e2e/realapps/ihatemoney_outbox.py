"""Counts every mail ihatemoney sends, in whichever process sends it (test suite or worker).

Loaded as a pytest plugin by the app's suite (``-p ihatemoney_outbox``) and imported by the
worker's app module. Flask-Mail emits ``email_dispatched`` for each message it sends (also
with ``MAIL_SUPPRESS_SEND``); each becomes one JSON line appended to ``$REALAPP_OUTBOX``,
with the process that sent it, so a test can count the mails a worker sent exactly once.
A message :mod:`ihatemoney_bridge` replays into the suite (``REPLAYED`` set) was already
recorded by the worker that sent it, and is not recorded again.
"""

from __future__ import annotations

import json
import os
from typing import Any

from flask_mail import email_dispatched

PROCESS = os.environ.get("REALAPP_PROCESS", "suite")
REPLAYED = "realapp_replayed"  # attribute of a message replayed from a worker's line


def line_of(message: Any) -> dict[str, object]:
    """What a mail is, for comparing runs: recipients, subject, body."""
    return {
        "to": sorted(message.recipients or []),
        "subject": message.subject,
        "body": message.body or "",
    }


def _record(sender: Any, message: Any, **_: Any) -> None:  # sender: the Flask app
    path = os.environ.get("REALAPP_OUTBOX")
    if not path or getattr(message, REPLAYED, False):
        return
    line = {"process": PROCESS, "pid": os.getpid(), **line_of(message)}
    with open(path, "a", encoding="utf-8") as out:  # one short append per mail: atomic
        out.write(json.dumps(line) + "\n")


email_dispatched.connect(_record)
