"""pytest plugin for the async pass: a Django app's own suite against real workers, honestly.

The app's tests read ``django.core.mail.outbox`` right after the request. Once a mail's
delivery is a job (``queue_runtime.django_mail``), a worker sends it, in another process,
after the call returned. This plugin makes the suite wait for the worker instead of for
nothing: each delivery ``django_mail`` queued (``deliver.enqueue``) waits, with a deadline, until the job
has finished, fails the test when it did not succeed (its status and last error in the
message), then puts into this process's ``mail.outbox`` the message the worker recorded
(:mod:`django_outbox`, ``process: worker``), as the worker built it from the payload.
A replayed message is not recorded again.

With ``$REALAPP_KILL_FIRST_SENDER`` set, the worker that delivered the first mail is
SIGKILLed right after it (:mod:`first_sender`): the rest must come from the other worker.
A kill between a worker's send and its acknowledgement (the mail sent again, with the
same Message-ID) is the runtime's own test: test_django_mail_worker.py.

Nothing of the app is changed: the suite runs as it is, against the real queue
(``QUEUE_RUNTIME_MODE=queue``: the runtime's pytest plugin stands aside).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import django_outbox
import first_sender
import pytest

from queue_runtime import JobHandle, JobStatus, current, django_mail
from queue_runtime.gate._decide import gate_decision
from queue_runtime.handle import InlineHandle

DEADLINE = float(os.environ.get("REALAPP_JOB_DEADLINE", "60"))
_enqueue = django_mail.deliver.enqueue


def _worker_line(message_id: str) -> dict[str, Any] | None:
    path = Path(os.environ["REALAPP_OUTBOX"])
    if not path.exists():
        return None
    for text in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line["process"] == "worker" and line["message_id"] == message_id:
            return line  # type: ignore[no-any-return]
    return None


def _wait(handle: JobHandle) -> None:
    inspector = current().inspector
    deadline = time.monotonic() + DEADLINE
    while inspector.unfinished_ids([handle.id]):
        if time.monotonic() > deadline:
            raise AssertionError(f"job {handle.id} not finished by a worker in {DEADLINE:.0f}s")
        time.sleep(0.02)
    detail = inspector.job_detail(handle.id)
    if detail is None or detail.status is not JobStatus.SUCCEEDED:
        raise AssertionError(f"job {handle.id} did not succeed on a worker: {detail}")


def _bridged_enqueue(message: django_mail.MailMessage) -> JobHandle:
    """``deliver.enqueue``: waits for the worker, then replays the mail it recorded."""
    from django.core import mail

    sent = _enqueue(message)
    if isinstance(sent, InlineHandle):  # the async pass expects every delivery on a worker
        decision = gate_decision(current(), django_mail.deliver)
        raise AssertionError(f"delivery ran in the suite, not on a worker: {decision.reason}")
    _wait(sent)
    line = _worker_line(message.message_id)
    if line is None:
        raise AssertionError(f"job {sent.id} succeeded, no worker recorded {message.message_id}")
    replayed = django_mail.rebuild(django_mail.MailMessage.model_validate(line["payload"]))
    setattr(replayed, django_outbox.REPLAYED, True)
    if hasattr(mail, "outbox"):
        mail.outbox.append(replayed)
    first_sender.kill_once(int(line["pid"]))
    return sent


def pytest_configure(config: pytest.Config) -> None:
    # On the job object, not on the module: the gate's fingerprint of ``deliver`` follows the
    # module's globals its code names (``.send(...)`` names ``send``), so replacing a module
    # function would change the fingerprint the load test certified, and close the gate.
    django_mail.deliver.enqueue = _bridged_enqueue  # type: ignore[method-assign]
