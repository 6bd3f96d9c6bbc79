"""SQLAlchemy mapped instances by reference, and enqueue after the session's commit.

The model's table lives in a SQLite file (the row a worker would read again);
the queue is the test's PostgreSQL. The app registers its session with
``queue_runtime.codecs.sqlalchemy_session``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

sqlalchemy = pytest.importorskip("sqlalchemy", reason="SQLAlchemy is not installed")

from sqlalchemy import String, create_engine  # noqa: E402
from sqlalchemy.orm import (  # noqa: E402
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    scoped_session,
    sessionmaker,
)

from queue_runtime import JobStatus, job  # noqa: E402
from queue_runtime._refs import current_session  # noqa: E402
from queue_runtime.codecs import decode_value, encode_value, sqlalchemy_session  # noqa: E402
from queue_runtime.errors import ReferenceGone, Unencodable  # noqa: E402
from queue_runtime.registry import Registry  # noqa: E402
from queue_runtime.runtime import Runtime  # noqa: E402
from queue_runtime.store import Cancellation, JobQuery  # noqa: E402

jobs = Registry()


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(100))


@job(name="tests.sa.welcome", pool="batch", registry=jobs)
def welcome(account):  # type: ignore[no-untyped-def]
    return account.email


@pytest.fixture
def session(tmp_path: Path) -> Iterator[scoped_session]:  # type: ignore[type-arg]
    engine = create_engine(f"sqlite:///{tmp_path / 'app.sqlite3'}")
    Base.metadata.create_all(engine)
    scoped = scoped_session(sessionmaker(engine))
    sqlalchemy_session(scoped)
    try:
        yield scoped
    finally:
        sqlalchemy_session(None)
        scoped.remove()
        engine.dispose()


def test_a_mapped_instance_travels_by_reference_and_is_read_again(
    session: scoped_session,  # type: ignore[type-arg]
) -> None:
    account = Account(email="a@example.com")
    session.add(account)
    session.commit()
    account.email = "unsaved@example.com"  # not committed: not carried
    stored = json.loads(json.dumps(encode_value(account)))
    assert stored == {
        "__qr__": "sqlalchemy.model",
        "cls": f"{__name__}:Account",
        "pk": [account.id],
    }
    session.rollback()
    session.remove()  # the worker's session: another one
    again = decode_value(stored)
    assert isinstance(again, Account) and again.email == "a@example.com"
    session.delete(again)
    session.commit()
    with pytest.raises(ReferenceGone, match=r"Account pk=\[1\] no longer exists"):
        decode_value(stored)


def test_an_unflushed_instance_is_not_encodable(session: scoped_session) -> None:  # type: ignore[type-arg]
    transient = Account(email="t@example.com")
    with pytest.raises(Unencodable, match="unsaved SQLAlchemy instance"):
        encode_value(transient)
    session.add(transient)  # pending: still no primary key
    with pytest.raises(Unencodable, match="unsaved SQLAlchemy instance"):
        encode_value(transient)


def _stored(runtime: Runtime) -> int:
    return len(runtime.inspector.list_jobs(JobQuery(job=welcome.name)).jobs)


@pytest.mark.pg
def test_an_enqueue_in_a_session_transaction_waits_for_its_commit(
    runtime: Runtime,
    session: scoped_session,  # type: ignore[type-arg]
) -> None:
    account = Account(email="b@example.com")
    session.add(account)
    session.flush()
    dropped = welcome.enqueue(account)
    assert (dropped.status(), dropped.id, _stored(runtime)) == (JobStatus.QUEUED, 0, 0)
    session.rollback()
    assert (dropped.status(), _stored(runtime)) == (JobStatus.CANCELLED, 0)

    account = Account(email="c@example.com")
    session.add(account)
    session.flush()
    kept = welcome.enqueue(account)
    assert _stored(runtime) == 0
    session.commit()
    assert _stored(runtime) == 1 and kept.id > 0
    assert kept.status() is JobStatus.QUEUED
    assert kept.record().args == {
        "account": {"__qr__": "sqlalchemy.model", "cls": f"{__name__}:Account", "pk": [account.id]}
    }


@pytest.mark.pg
def test_a_factory_returning_the_scoped_session_defers_to_the_commit_of_its_session(
    runtime: Runtime,
    session: scoped_session,  # type: ignore[type-arg]
) -> None:
    sqlalchemy_session(lambda: session)  # Flask-SQLAlchemy's form: lambda: db.session
    assert isinstance(current_session(), Session)  # the thread's session, not the proxy
    account = Account(email="f@example.com")
    session.add(account)
    session.flush()
    kept = welcome.enqueue(account)
    assert _stored(runtime) == 0
    session.commit()
    assert _stored(runtime) == 1 and kept.id > 0


@pytest.mark.pg
def test_a_session_that_wrote_nothing_does_not_defer(
    runtime: Runtime,
    session: scoped_session,  # type: ignore[type-arg]
) -> None:
    session.add(Account(email="d@example.com"))
    session.commit()
    account = session.get(Account, 1)  # a read: the transaction is open, nothing written
    handle = welcome.enqueue(account)
    assert handle.id > 0 and _stored(runtime) == 1
    session.rollback()
    assert handle.status() is JobStatus.QUEUED


@pytest.mark.pg
def test_a_deferred_enqueue_cancelled_before_the_commit_is_never_stored(
    runtime: Runtime,
    session: scoped_session,  # type: ignore[type-arg]
) -> None:
    account = Account(email="e@example.com")
    session.add(account)
    session.flush()
    handle = welcome.enqueue(account)
    assert handle.cancel() is Cancellation.CANCELLED
    session.commit()
    assert (handle.status(), handle.id, _stored(runtime)) == (JobStatus.CANCELLED, 0, 0)


@pytest.mark.pg
def test_enqueue_many_in_a_session_transaction_is_one_write_at_the_commit(
    runtime: Runtime,
    session: scoped_session,  # type: ignore[type-arg]
) -> None:
    accounts = [Account(email=f"m{i}@example.com") for i in range(3)]
    session.add_all(accounts)
    session.flush()
    dropped = welcome.enqueue_many([((a,), {}) for a in accounts])
    session.rollback()
    assert [h.status() for h in dropped] == [JobStatus.CANCELLED] * 3
    accounts = [Account(email=f"n{i}@example.com") for i in range(3)]
    session.add_all(accounts)
    session.flush()
    kept = welcome.enqueue_many([((a,), {}) for a in accounts])
    assert kept[1].cancel() is Cancellation.CANCELLED  # this one is never stored
    assert [h.id for h in kept] == [0, 0, 0] and _stored(runtime) == 0
    session.commit()
    assert _stored(runtime) == 2 and kept[0].id > 0 and kept[2].id > 0 and kept[1].id == 0
    assert [h.status() for h in kept] == [JobStatus.QUEUED, JobStatus.CANCELLED, JobStatus.QUEUED]
