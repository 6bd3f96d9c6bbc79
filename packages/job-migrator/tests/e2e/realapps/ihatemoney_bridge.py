"""pytest plugin for the async pass: ihatemoney's own suite against real workers, honestly.

The app's tests read Flask-Mail's outbox right after the request
(``with mail.record_messages() as outbox: client.post(...); assert len(outbox) == 1``).
Once a mail job runs on a worker, the mail is sent in another process, after the
response. This plugin makes the suite wait for the worker instead of for nothing:

- after every request the app handles (Flask's ``request_finished``), it finds the
  jobs that request stored (ids above the newest one it has seen), waits with a
  deadline until each has finished, and fails the test when one did not succeed
  (its status and last error in the message);
- then it replays, into this process's ``email_dispatched``, each mail the workers
  recorded in the outbox since (:mod:`ihatemoney_outbox`, ``process: worker``), so the
  app's ``record_messages`` sees the mail the worker really sent: its recipients,
  subject and body, as the worker built them. A replayed message is not recorded
  again;
- with ``$REALAPP_KILL_FIRST_SENDER`` set, the worker that sent the first mail is
  SIGKILLed right after its jobs are done and its mail replayed (:mod:`first_sender`):
  the kill never lands between a worker's send and its acknowledgement;
- after each test, once its jobs are done, it forgets the queue's idempotency keys
  (``purge_keys(0)``, the runtime's own key expiry with no retention): the app drops
  its database after every test and builds the same projects again in the next, as
  :mod:`queue_runtime.testing.pytest_plugin` gives each test fresh keys; without it
  the second test's ``raclette`` would share the first one's key.

Nothing of the app is changed: the suite runs as it is, against the real queue
(``QUEUE_RUNTIME_MODE=queue``: the runtime's pytest plugin stands aside).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import first_sender
import ihatemoney_outbox
import pytest
from flask import request_finished
from flask_mail import Message, email_dispatched

from queue_runtime import current
from queue_runtime.store import JobQuery, JobStatus

DEADLINE = float(os.environ.get("REALAPP_JOB_DEADLINE", "60"))


class _Bridge:
    def __init__(self) -> None:
        self.newest = 0  # the highest job id seen
        self.read = 0  # bytes of the outbox already replayed

    def start(self) -> None:
        page = current().inspector.list_jobs(JobQuery(limit=1))
        self.newest = max((j.id for j in page.jobs), default=0)
        self.read = self._outbox().stat().st_size if self._outbox().exists() else 0

    def after_request(self, app: Any, **_: Any) -> None:
        new = self._new_jobs()
        if new:
            self._wait(new)
        self._replay(app)

    def _new_jobs(self) -> list[int]:
        page = current().inspector.list_jobs(JobQuery(limit=200))
        new = sorted(j.id for j in page.jobs if j.id > self.newest)
        self.newest = max([self.newest, *new])
        return new

    def _wait(self, ids: list[int]) -> None:
        inspector = current().inspector
        deadline = time.monotonic() + DEADLINE
        while inspector.unfinished_ids(ids):
            if time.monotonic() > deadline:
                raise AssertionError(f"jobs {ids} not finished by a worker in {DEADLINE:.0f}s")
            time.sleep(0.02)
        for job_id in ids:
            detail = inspector.job_detail(job_id)
            if detail is None or detail.status is not JobStatus.SUCCEEDED:
                raise AssertionError(f"job {job_id} did not succeed on a worker: {detail}")

    def _replay(self, app: Any) -> None:
        path = self._outbox()
        if not path.exists():
            return
        with path.open("rb") as found:
            found.seek(self.read)
            chunk = found.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.read += len(complete)
        for line in complete.decode("utf-8").splitlines():
            mail = json.loads(line)
            if mail["process"] != "worker":
                continue  # sent here: the app's recorder saw it already
            message = Message(mail["subject"], recipients=mail["to"], body=mail["body"])
            setattr(message, ihatemoney_outbox.REPLAYED, True)
            if app is not None:  # None: between tests, where no recorder listens
                email_dispatched.send(app, message=message)
            first_sender.kill_once(int(mail["pid"]))  # its jobs are done: none is in flight

    def _outbox(self) -> Path:
        return Path(os.environ["REALAPP_OUTBOX"])

    def forget_keys(self) -> None:
        runtime = current()
        runtime.store.purge_keys(0)
        runtime.gate_store.purge_keys(0)


_bridge = _Bridge()


def pytest_configure(config: pytest.Config) -> None:
    _bridge.start()
    request_finished.connect(_bridge.after_request)


@pytest.fixture(autouse=True)
def _queue_between_tests() -> Iterator[None]:
    yield
    try:
        _bridge.after_request(None)  # a job a fixture's teardown stored, if any
    finally:
        _bridge.forget_keys()
