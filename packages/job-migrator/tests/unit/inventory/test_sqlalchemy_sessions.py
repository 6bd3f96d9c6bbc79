"""SQLAlchemy sessions, statements and results are typed from the documented API.

Written from SQLAlchemy 2.0's "Session Basics" and "Session API" pages and Flask-SQLAlchemy's
quick start, not from any scanned project: a session is made by a factory configured once
(``Session = sessionmaker(engine)``, ``async_sessionmaker``, ``scoped_session``), often in
another module than the code using it, or handed out by a context manager; statements are
built by generative chains and executed later; results are read by chains again. Before,
each of these receivers was of unknown type: ``session.commit()``, ``query.where(...)`` and
``result.scalars()`` were gaps and the jobs ``unknown`` (issue 26's gap ranking)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, scan
from inventory._catalogue import Catalogue, CatalogueSpec, Condition
from inventory._extract._library import known_type, library_type, retyped
from inventory.models import EffectKind

pytest.importorskip("sqlalchemy")

_DB = """\
from contextlib import asynccontextmanager, contextmanager
from typing import AsyncIterator, Iterator

from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session, scoped_session, sessionmaker

db = SQLAlchemy()
engine = create_engine("postgresql://localhost/app")
SessionLocal = sessionmaker(bind=engine)
session_factory = async_sessionmaker(create_async_engine("postgresql+asyncpg://h/app"))
db_session = scoped_session(SessionLocal)


@contextmanager
def session_scope() -> Iterator[Session]:
    with SessionLocal() as session:
        yield session


class Registry:
    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with session_factory() as session:
            yield session


registry = Registry()
"""

_JOBS = """\
import threading

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from .db import SessionLocal, db, db_session, engine, registry, session_factory, session_scope
from .models import Member


def with_block(member_id):
    with Session(engine) as session:
        session.get(Member, member_id)
        session.commit()


def from_factory(name):
    session = SessionLocal()
    session.add(Member(name=name))
    session.commit()


def begin_block(member_id):
    with SessionLocal.begin() as session:
        session.execute(delete(Member).where(Member.id == member_id))


def statement_variable(name):
    query = select(Member)
    query = query.where(Member.name == name).limit(1)
    with session_scope() as session:
        result = session.execute(query)
        return result.scalars().first()


def insert_variable(name):
    with SessionLocal() as session:
        stmt = insert(Member).values(name=name)
        session.execute(stmt)
        session.commit()


def update_variable(member_id, name):
    with SessionLocal() as session:
        stmt = update(Member).where(Member.id == member_id).values(name=name)
        session.execute(stmt)
        session.commit()


def upsert(name):
    stmt = pg_insert(Member).values(name=name).on_conflict_do_nothing()
    with SessionLocal() as session:
        session.execute(stmt)
        session.commit()


def legacy_query(name):
    session = SessionLocal()
    session.query(Member).filter_by(name=name).order_by(Member.id).first()
    session.close()


def legacy_delete(name):
    db_session.query(Member).filter(Member.name == name).delete()
    db_session.commit()
    db_session.remove()


def flask_sqlalchemy(name):
    db.session.add(Member(name=name))
    db.session.commit()


def merge(member):
    with SessionLocal() as session:
        session.merge(member)
        session.commit()


async def async_factory(name):
    session = session_factory()
    result = await session.execute(select(Member).where(Member.name == name))
    result.scalar_one_or_none()
    await session.close()


async def async_context(name):
    async with registry.session() as session:
        session.add(Member(name=name))
        await session.commit()


def start(member):
    threading.Thread(target=with_block, args=(1,)).start()
    threading.Thread(target=from_factory, args=("a",)).start()
    threading.Thread(target=begin_block, args=(1,)).start()
    threading.Thread(target=statement_variable, args=("a",)).start()
    threading.Thread(target=insert_variable, args=("a",)).start()
    threading.Thread(target=update_variable, args=(1, "a")).start()
    threading.Thread(target=upsert, args=("a",)).start()
    threading.Thread(target=legacy_query, args=("a",)).start()
    threading.Thread(target=legacy_delete, args=("a",)).start()
    threading.Thread(target=flask_sqlalchemy, args=("a",)).start()
    threading.Thread(target=merge, args=(member,)).start()
"""

_ASYNC_SITES = """\
import asyncio

from .jobs import async_context, async_factory


async def view(name):
    asyncio.create_task(async_factory(name))
    asyncio.create_task(async_context(name))
"""

_MODELS = """\
from .db import db


class Member(db.Model):
    pass
"""


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("sessions") / "app"
    package = root / "app"
    package.mkdir(parents=True)
    files = {"__init__.py": "", "db.py": _DB, "jobs.py": _JOBS, "views.py": _ASYNC_SITES}
    for name, text in {**files, "models.py": _MODELS}.items():
        (package / name).write_text(text, encoding="utf-8")
    return scan(Path(root), use_cache=False, jobs=1, write=False)


_R, _I, _O = EffectKind.DB_READ, EffectKind.DB_INSERT, EffectKind.DB_OVERWRITE
_U, _D = EffectKind.DB_UPSERT, EffectKind.DB_DELETE
_SAFE, _REPEATS = Idempotency.IDEMPOTENT, Idempotency.NON_IDEMPOTENT


@pytest.mark.parametrize(
    ("job", "verdict", "kinds"),
    [
        ("with_block", _SAFE, {_R, _O}),
        ("from_factory", _REPEATS, {_I, _O}),
        ("begin_block", _SAFE, {_D}),
        ("statement_variable", _SAFE, {_R}),
        ("insert_variable", _REPEATS, {_I, _O}),
        ("update_variable", _SAFE, {_O}),
        ("upsert", _SAFE, {_U, _O}),
        ("legacy_query", _SAFE, {_R}),
        ("legacy_delete", _SAFE, {_D, _O}),
        ("flask_sqlalchemy", _REPEATS, {_I, _O}),
        ("merge", _SAFE, {_U, _O}),
        ("async_factory", _SAFE, {_R}),
        ("async_context", _REPEATS, {_I, _O}),
    ],
)
def test_each_session_call_has_the_effect_its_api_documents(
    inventory: Inventory, job: str, verdict: Idempotency, kinds: set[EffectKind]
) -> None:
    found = inventory.job(f"app.jobs.{job}")
    assert found is not None
    assert {e.kind for e in found.effects} == kinds
    assert found.idempotency == verdict, [e.message for e in found.evidence]


def test_no_session_call_is_left_a_gap(inventory: Inventory) -> None:
    gaps = [
        e.message
        for job in inventory.jobs
        for e in job.evidence
        if e.message.startswith(("unresolved calls", "may run behind"))
    ]
    assert gaps == []


def test_a_statement_of_unknown_kind_is_still_no_effect_by_guess() -> None:
    """``session.execute(stmt)`` with ``stmt`` a parameter: the catalogue gives no effect."""
    catalogue = Catalogue.load()
    from inventory.summary import CallInfo, Span

    call = CallInfo(
        target="sqlalchemy.orm.Session.execute",
        span=Span(line=1),
        args=["<expr>"],
        arg_sources=["stmt"],
    )
    found = catalogue.match_call(call, "sqlalchemy.orm.Session.execute")
    assert found is None or found.sql_unknown == "stmt"


@pytest.mark.parametrize(
    ("name", "typed"),
    [
        ("sqlalchemy.orm.Session.query().filter().first", "sqlalchemy.orm.Query.first"),
        (
            "sqlalchemy.ext.asyncio.AsyncSession().commit",
            "sqlalchemy.ext.asyncio.AsyncSession.commit",
        ),
        ("sqlalchemy.orm.Session.execute().scalars().all", "sqlalchemy.engine.ScalarResult.all"),
        ("flask_sqlalchemy.SQLAlchemy.session.add", "sqlalchemy.orm.Session.add"),
        ("shop.mail.get_client().send", "shop.mail.get_client().send"),
    ],
)
def test_library_type_follows_typed_chains_only(name: str, typed: str) -> None:
    assert library_type(name) == typed


def test_known_type_is_only_for_the_classes_typed_here() -> None:
    assert known_type("requests.Session().get") == ""
    assert retyped("requests.Session().get") == "requests.Session.get"
    assert known_type("sqlalchemy.sql.Select.where") == "sqlalchemy.sql.Select.where"


def test_type_matches_needs_a_positional_argument() -> None:
    with pytest.raises(ValueError, match="needs `arg`"):
        Condition(kwarg="statement", type_matches="Select$")
    spec = CatalogueSpec.model_validate(
        {
            "effect": [
                {
                    "call": "pkg.run",
                    "when": [{"arg": 0, "type_matches": "Insert$", "effect": "db_insert"}],
                }
            ]
        }
    )
    assert spec.effect[0].when[0].type_matches == "Insert$"
