"""Django mail through the queue with real workers: built in the sender, delivered by a worker.

The sender is ``djsite.send_mails`` (the tiny project in ``tests/fixtures/framework_apps``)
in a subprocess of its own (Django's set-up is process-wide); the workers run
``djsite.mail_jobs`` with ``--django-settings djsite.settings`` and a mail backend that
writes each message to a file (``djsite.backends.FileEachBackend``), so the test reads
which process sent what. Real PostgreSQL and Redis; the SIGKILL is real.
"""

from __future__ import annotations

import email
import email.policy
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("django", reason="Django is not installed (the test-frameworks extra)")

from queue_runtime import JobStatus, Settings
from queue_runtime.runtime import Runtime
from queue_runtime.testing import WorkerSpawner
from queue_runtime.testing.spawner import SETTINGS_ENV
from tests.framework_env import djsite_env, send_mails
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

BACKEND = "djsite.backends.FileEachBackend"


@pytest.fixture
def tuned(settings: Settings) -> Settings:
    """Short leases: a killed worker's job is picked up again within seconds."""
    return settings.model_copy(update={"lease_ttl": 2.0, "poll_interval": 0.1})


@pytest.fixture
def env(tmp_path: Path, tuned: Settings) -> dict[str, str]:
    return djsite_env(
        tmp_path,
        BACKEND,
        DJSITE_MAIL_DIR=str(tmp_path / "mail"),
        **{SETTINGS_ENV: tuned.model_dump_json()},
    )


@pytest.fixture
def workers(tmp_path: Path, env: dict[str, str]) -> Iterator[WorkerSpawner]:
    logs = tmp_path / "logs"
    logs.mkdir()
    spawned = WorkerSpawner(logs, "djsite.mail_jobs", cwd=tmp_path, env=env)
    try:
        yield spawned
    finally:
        spawned.stop_all()


def _send(env: dict[str, str], cwd: Path, *flags: str) -> dict[str, Any]:
    return send_mails(env, cwd, "send", *flags)


def _mails(folder: Path) -> list[tuple[int, Any]]:
    """(pid of the sender, parsed message) of every file the backend wrote."""
    found = []
    for path in sorted(folder.glob("*.eml")):
        parsed = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        found.append((int(path.name.split("-")[0]), parsed))
    return found


def _settled(runtime: Runtime, ids: list[int]) -> bool:
    return all(runtime.store.get(i).status is JobStatus.SUCCEEDED for i in ids)  # type: ignore[union-attr]


def test_a_worker_delivers_what_the_sender_built(
    runtime: Runtime, tuned: Settings, workers: WorkerSpawner, env: dict[str, str], tmp_path: Path
) -> None:
    worker = workers.start(tuned, "--django-settings", "djsite.settings")
    sent = _send(env, tmp_path, "--open-gate")
    ids = [i for i in sent["jobs"] if i is not None]
    assert len(set(ids)) == 3  # each send one job: the message object sent twice is two mails
    wait_until(lambda: _settled(runtime, ids), timeout=60, message=f"delivery\n{workers.logs()}")

    mails = _mails(tmp_path / "mail")
    by_worker = [m for pid, m in mails if pid == worker.pid]
    in_caller = [m for pid, m in mails if pid == sent["pid"]]
    assert sorted(str(m["Subject"]) for m in by_worker) == ["Report", "Report", "Welcome"]
    # the project's own message class is sent where it was built, as before
    assert [str(m["Subject"]) for m in in_caller] == ["s"] and sent["in_caller"] == 1
    reports = [m for m in by_worker if str(m["Subject"]) == "Report"]
    assert sorted(str(m["To"]) for m in reports) == ["b@djsite.example", "to@djsite.example"]
    made = set(sent["message_ids"])  # given in the sender, carried by the payload
    assert {str(m["Message-ID"]) for m in by_worker} == made and len(made) == 3
    report = reports[0]
    parts = {
        p.get_filename(): p.get_payload(decode=True) for p in report.walk() if p.get_filename()
    }
    assert parts["chart.png"] == bytes(range(256)) * 4
    # Django 6 builds text parts with the email package's modern API, which ends them with
    # a newline, in the worker as in the caller; Django 5 leaves the text as it was given.
    assert parts["notes.txt"].decode().removesuffix("\n") == "ünïcode notes"
    html = [p for p in report.walk() if p.get_content_type() == "text/html"]
    assert [p.get_content().removesuffix("\n") for p in html] == ["<p>html</p>"]


def test_gate_closed_the_sender_delivers_as_before(
    runtime: Runtime, workers: WorkerSpawner, env: dict[str, str], tmp_path: Path
) -> None:
    """A non-idempotent delivery the load test has not certified stays in the caller."""
    sent = _send(env, tmp_path)
    assert sent["jobs"] == [None, None, None], sent  # inline handles: nothing stored
    mails = _mails(tmp_path / "mail")
    assert {pid for pid, _ in mails} == {sent["pid"]}
    assert sorted(str(m["Subject"]) for _, m in mails) == ["Report", "Report", "Welcome", "s"]


def test_a_worker_killed_after_the_server_took_the_mail_resends_it_with_the_same_message_id(
    runtime: Runtime, tuned: Settings, workers: WorkerSpawner, env: dict[str, str], tmp_path: Path
) -> None:
    stall = tmp_path / "stalled"
    workers.env = {**env, "DJSITE_STALL_ONCE": str(stall)}
    victim = workers.start(tuned, "--django-settings", "djsite.settings", "--concurrency", "1")
    sent = _send(env, tmp_path, "--open-gate")
    ids = [i for i in sent["jobs"] if i is not None]
    wait_until(stall.exists, timeout=60, message=f"the first mail to be written\n{workers.logs()}")
    workers.kill(victim, signal.SIGKILL)
    assert victim.wait(timeout=10) == -signal.SIGKILL
    survivor = workers.start(tuned, "--django-settings", "djsite.settings")
    wait_until(lambda: _settled(runtime, ids), timeout=60, message=f"redelivery\n{workers.logs()}")

    mails = [(pid, m) for pid, m in _mails(tmp_path / "mail") if pid != sent["pid"]]
    first = next(m for pid, m in mails if pid == victim.pid)
    copies = [(pid, m) for pid, m in mails if str(m["Message-ID"]) == str(first["Message-ID"])]
    # the kill came after the server had the mail: it is sent again, by the survivor, with
    # the same Message-ID (what receiving servers drop a copy by); every other mail once
    assert [pid for pid, _ in copies] == [victim.pid, survivor.pid]
    others = [m for _, m in mails if str(m["Message-ID"]) != str(first["Message-ID"])]
    assert len(others) == len(ids) - 1
    assert len({str(m["Message-ID"]) for m in others}) == len(others)
    records = [runtime.store.get(i) for i in ids]
    assert sorted(r.attempt for r in records if r is not None) == [1] * (len(ids) - 1) + [2]
