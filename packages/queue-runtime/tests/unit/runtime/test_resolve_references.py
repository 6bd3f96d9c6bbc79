"""A worker reading model references: a gone row is a retried failure, then dead.

The model's table is SQLite (SQLAlchemy, in process); the runtime is in memory.
A sync job reads its references when its attempt starts (in the framework's
scope), an async job's are read before it starts: either way ``ReferenceGone``
is an ordinary failure, retried by the policy and dead on the last attempt.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy", reason="SQLAlchemy is not installed")

from sqlalchemy import create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, scoped_session, sessionmaker

from queue_runtime import RetryPolicy, Runtime, Settings, job
from queue_runtime.codecs import sqlalchemy_session
from queue_runtime.registry import Registry
from queue_runtime.retry import Backoff
from queue_runtime.store import ClaimedJob, Failure
from queue_runtime.testing import memory_stores
from queue_runtime.worker._execute import Executor
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._resolve import Invocation, Resolver
from queue_runtime.worker._settle import Settlement, decide

NOW = datetime(2030, 1, 1, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=3, base_delay=0.5, max_delay=10)
jobs = Registry()


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(primary_key=True)


@job(name="tests.refs.sync", pool="batch", registry=jobs)
def read_sync(note):  # type: ignore[no-untyped-def]
    return note.id


@job(name="tests.refs.async", pool="batch", registry=jobs)
async def read_async(note):  # type: ignore[no-untyped-def]
    return note.id


@pytest.fixture
def resolver(tmp_path: Path) -> Iterator[Resolver]:
    engine = create_engine(f"sqlite:///{tmp_path / 'notes.sqlite3'}")
    Base.metadata.create_all(engine)
    scoped = scoped_session(sessionmaker(engine))
    sqlalchemy_session(scoped)
    settings = Settings()
    runtime = Runtime(settings, jobs, memory_stores(settings))
    try:
        yield Resolver(runtime)
    finally:
        sqlalchemy_session(None)
        scoped.remove()
        engine.dispose()


def _claimed(name: str, attempt: int) -> ClaimedJob:
    ref = {"__qr__": "sqlalchemy.model", "cls": f"{__name__}:Note", "pk": [404]}
    return ClaimedJob(1, name, "batch", {"note": ref}, attempt, 3, None, None, NOW)


def _run(inv: Invocation) -> Outcome:
    got: list[Outcome] = []
    finished = threading.Event()

    def done(outcome: Outcome) -> None:
        got.append(outcome)
        finished.set()

    Executor("test").run(inv, done)
    assert finished.wait(10)
    return got[0]


def _settled(job: ClaimedJob, outcome: Outcome) -> Any:
    backoff = Backoff(rng=random.Random(3), now=lambda: NOW)
    return decide(Settlement(job, outcome, POLICY, False), backoff)


@pytest.mark.parametrize("attempt", [1, 3])
def test_a_sync_jobs_gone_row_fails_when_its_attempt_starts(
    resolver: Resolver, attempt: int
) -> None:
    job = _claimed("tests.refs.sync", attempt)
    inv = resolver.resolve(job)
    assert isinstance(inv, Invocation) and inv.late is not None  # read in the job's scope
    outcome = _run(inv)
    assert outcome.kind is OutcomeKind.FAILED and not outcome.permanent
    assert outcome.error.startswith("ReferenceGone: ") and "pk=[404]" in outcome.error
    failure = _settled(job, outcome)
    assert isinstance(failure, Failure)
    assert (failure.retry_at is None) == (attempt == 3)  # retried, then dead-lettered


def test_an_async_jobs_gone_row_fails_before_it_starts(resolver: Resolver) -> None:
    outcome = resolver.resolve(_claimed("tests.refs.async", 1))
    assert isinstance(outcome, Outcome)
    assert outcome.kind is OutcomeKind.FAILED and not outcome.permanent
    assert outcome.error.startswith("ReferenceGone: ")


def test_a_forged_reference_class_is_rejected_uncalled(resolver: Resolver) -> None:
    forged = {"__qr__": "sqlalchemy.model", "cls": "os:system", "pk": ["true"]}
    job = ClaimedJob(1, "tests.refs.sync", "batch", {"note": forged}, 1, 3, None, None, NOW)
    inv = resolver.resolve(job)
    assert isinstance(inv, Invocation)
    outcome = _run(inv)
    assert (
        outcome.kind is OutcomeKind.REJECTED and "is not a sqlalchemy.model class" in outcome.error
    )
