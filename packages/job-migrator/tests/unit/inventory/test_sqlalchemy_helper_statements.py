"""A statement built by a helper of another module decides what ``session.execute`` does.

Written from SQLAlchemy 2.0's documented API: ``select()``/``insert()``/``update()``/
``delete()`` build statements whose generative methods (``where``, ``values``,
``order_by``...) return a new statement of the same kind, and ``Session.execute`` /
``AsyncSession.execute`` / ``scalars`` run one. Before, a statement made in another module
(``query = build(uid)``) was untyped in the job: one gap at the session's API, ``unknown``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, scan
from inventory._classify._index import SymbolIndex
from inventory._classify._statements import statement_of
from inventory._extract import extract_source
from inventory._extract._library import SELECT, statement_class
from inventory.models import EffectKind

pytest.importorskip("sqlalchemy")

_MODELS = """\
from sqlalchemy import Boolean, Column, Integer
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "items"
    id = Column(Integer, primary_key=True)
    owner = Column(Integer)
    done = Column(Boolean)
"""

_QUERIES = """\
from typing import TYPE_CHECKING

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.models import Item

if TYPE_CHECKING:
    from sqlalchemy import Select


def owned(owner):
    query = select(Item).where(Item.owner == owner)
    query = query.order_by(Item.id)
    return query


def scoped(query: "Select", owner) -> "Select":
    return query.where(Item.owner == owner)


def finish(owner):
    stmt = update(Item).where(Item.owner == owner)
    stmt = stmt.values(done=True)
    return stmt


def add(owner):
    return insert(Item).values(owner=owner)


def purge(owner):
    return delete(Item).where(Item.owner == owner)


def claim(owner):
    stmt = pg_insert(Item).values(owner=owner)
    stmt = stmt.on_conflict_do_nothing()
    return stmt


def limited(query, n):
    query = query.limit(n)
    return query


def page(query: "Select", n, first=False):
    if first:
        return query
    for _ in range(n):
        query = query.offset(n)
    return query.limit(n)


def swapped(query, other):
    query = other
    return query


class Repo:
    @classmethod
    def listing(cls, owner):
        query = select(Item)
        query = cls.visible(query, owner)
        query = query.limit(5)
        return query

    @classmethod
    def visible(cls, query: "Select", owner):
        if owner is None:
            return query
        return query.where(Item.owner == owner)


class Plain:
    def where(self, x):
        return self


def not_a_statement():
    thing = Plain()
    thing = thing.where(1)
    return thing
"""

_JOBS = """\
import asyncio

from sqlalchemy import select
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from app.models import Item
from app.queries import (
    add,
    claim,
    finish,
    limited,
    not_a_statement,
    owned,
    page,
    Repo,
    purge,
    scoped,
    swapped,
)

Session = async_sessionmaker(create_async_engine("postgresql+asyncpg://h/app"))


async def read_owned(owner):
    async with Session() as session:
        query = owned(owner)
        query = query.where(Item.done.is_(False))
        return (await session.scalars(query)).all()


async def read_scoped(owner):
    async with Session() as session:
        query = scoped(select(Item), owner)
        await session.execute(query)


async def finish_all(owner):
    async with Session() as session:
        await session.execute(finish(owner))
        await session.commit()


async def add_one(owner):
    async with Session() as session:
        stmt = add(owner)
        await session.execute(stmt)


async def purge_all(owner):
    async with Session() as session:
        await session.execute(purge(owner))


async def claim_one(owner):
    async with Session() as session:
        await session.execute(claim(owner))


async def read_limited(owner):
    async with Session() as session:
        await session.execute(limited(select(Item), 3))


async def read_page(owner):
    async with Session() as session:
        query = select(Item).where(Item.owner == owner)
        query = page(query, 10)
        query = query.order_by(Item.id)
        await session.execute(query)


async def read_swapped(owner):
    async with Session() as session:
        await session.execute(swapped(select(Item), owner))


async def read_listing(owner):
    async with Session() as session:
        await session.execute(Repo.listing(owner))


async def run_other(owner):
    async with Session() as session:
        await session.execute(not_a_statement())


def start(owner):
    asyncio.create_task(read_owned(owner))
    asyncio.create_task(read_scoped(owner))
    asyncio.create_task(finish_all(owner))
    asyncio.create_task(add_one(owner))
    asyncio.create_task(purge_all(owner))
    asyncio.create_task(claim_one(owner))
    asyncio.create_task(read_limited(owner))
    asyncio.create_task(read_page(owner))
    asyncio.create_task(read_swapped(owner))
    asyncio.create_task(read_listing(owner))
    asyncio.create_task(run_other(owner))
"""

_AT_RUN_TIME = (
    "unresolved calls (catalogued, but what they do depends on a value only known at run time, "
    "such as a statement the scan could not type): sqlalchemy.ext.asyncio.AsyncSession.execute"
)


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root: Path = tmp_path_factory.mktemp("sa_helpers") / "proj"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "models.py").write_text(_MODELS, encoding="utf-8")
    (root / "app" / "queries.py").write_text(_QUERIES, encoding="utf-8")
    (root / "app" / "jobs.py").write_text(_JOBS, encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


@pytest.mark.parametrize(
    ("job", "kinds", "verdict"),
    [
        ("read_owned", {EffectKind.DB_READ}, Idempotency.IDEMPOTENT),
        ("read_scoped", {EffectKind.DB_READ}, Idempotency.IDEMPOTENT),
        ("finish_all", {EffectKind.DB_OVERWRITE}, Idempotency.IDEMPOTENT),
        ("add_one", {EffectKind.DB_INSERT}, Idempotency.NON_IDEMPOTENT),
        ("purge_all", {EffectKind.DB_DELETE}, Idempotency.IDEMPOTENT),
        ("read_page", {EffectKind.DB_READ}, Idempotency.IDEMPOTENT),
        ("read_listing", {EffectKind.DB_READ}, Idempotency.IDEMPOTENT),
    ],
)
def test_a_statement_a_helper_returns_says_what_execute_does(
    inventory: Inventory, job: str, kinds: set[EffectKind], verdict: Idempotency
) -> None:
    found = inventory.job(f"app.jobs.{job}")
    assert found is not None
    lines = [e.message for e in found.evidence]
    assert found.idempotency is verdict, lines
    assert {e.kind for e in found.effects} == kinds
    assert _AT_RUN_TIME not in lines


def test_a_helper_narrowing_what_it_is_handed_returns_the_callers_statement(
    inventory: Inventory,
) -> None:
    """``limited(select(Item), 3)``: ``limited`` returns its parameter, narrowed: the caller's
    select. Its own ``query.limit`` is on an unannotated parameter that its one caller hands
    a ``Select`` (``_classify/_arguments``), so that is no gap either."""
    found = inventory.job("app.jobs.read_limited")
    assert found is not None
    lines = [e.message for e in found.evidence]
    assert {e.kind for e in found.effects} == {EffectKind.DB_READ}
    assert _AT_RUN_TIME not in lines
    assert found.idempotency is Idempotency.IDEMPOTENT, lines
    assert not any(m.startswith("unresolved calls") for m in lines)


@pytest.mark.parametrize("job", ["claim_one", "read_swapped", "run_other"])
def test_what_the_scan_cannot_tell_stays_one_gap_at_the_api(inventory: Inventory, job: str) -> None:
    """``claim``: an INSERT narrowed by ``on_conflict_do_nothing`` is an upsert, not the
    insert it started as (not guessed); ``swapped``: it returns its parameter after binding
    another value to it; ``not_a_statement``: ``.where`` of a project class."""
    found = inventory.job(f"app.jobs.{job}")
    assert found is not None
    assert found.idempotency is Idempotency.UNKNOWN
    assert _AT_RUN_TIME in [e.message for e in found.evidence]
    assert EffectKind.DB_INSERT not in {e.kind for e in found.effects}


def test_a_helpers_return_is_typed_through_re_assignments() -> None:
    summary = extract_source(_QUERIES, "app/queries.py", "app.queries")
    returned = summary.assignments
    assert returned["owned()"] == SELECT
    assert returned["finish()"] == "sqlalchemy.sql.Update"
    assert "claim()" not in returned
    assert "limited()" not in returned
    assert "not_a_statement()" not in returned
    assert summary.narrowing_helpers == {
        "scoped": 0,
        "limited": 0,
        "page": 0,
        "Repo.visible": 0,
    }
    # ``cls.visible(query, owner)`` hands ``query`` to a method that narrows it, declared later
    assert returned["Repo.listing()"] == SELECT


def test_statement_classes_as_imported_are_the_scans_names() -> None:
    assert statement_class("sqlalchemy.Select") == SELECT
    assert statement_class("sqlalchemy.sql.selectable.Select") == SELECT
    assert statement_class("sqlalchemy.dialects.postgresql.Insert") == "sqlalchemy.sql.Insert"
    assert statement_class("app.models.Select") == "app.models.Select"


def test_a_handed_value_of_a_union_type_is_no_statement() -> None:
    """A value handed to a helper may be typed as a union (``__union__.a:A|b:B``, whose
    ``|`` and ``:`` once split the deferred name wrongly and crashed arize-phoenix's scan)."""
    index = SymbolIndex([])
    assert statement_of("app.q.page()@0=__union__.a:A|b:B", index) == ""
    assert statement_of("app.q.page().limit()@x=y", index) == ""


def test_a_nested_defs_returns_are_its_own_not_the_helpers() -> None:
    """``with_flags(query)`` defines a local function before returning its parameter: the
    local function's ``return`` is not one of ``with_flags``' (a nested def at the top of the
    body was read as part of it, so the helper was missed); a ``return`` of another value
    anywhere in the helper's own body still rules it out."""
    source = (
        "def with_flags(query):\n"
        "    def flag(row):\n"
        "        return row.flag\n"
        "    return query\n"
        "\n"
        "def mixed(query, other):\n"
        "    if other:\n"
        "        return other\n"
        "    def keep(row):\n"
        "        return query\n"
        "    return query\n"
    )
    summary = extract_source(source, "app/helpers.py", "app.helpers")
    assert summary.narrowing_helpers == {"with_flags": 0}


_TUPLES = """\
from sqlalchemy import select

from app.models import Item


def pair(owner):
    query = select(Item).where(Item.owner == owner)
    return query, [owner]


def maybe(owner):
    if owner is None:
        return None, []
    return select(Item), [owner]


def lengths(owner):
    if owner is None:
        return None, [], 0
    return select(Item), [owner]


def mixed(owner):
    if owner is None:
        return "SELECT 1", []
    return select(Item), [owner]


def use(session):
    a, a_conditions = pair(1)
    session.execute(a)
    b, _ = maybe(1)
    session.execute(b)
    c, _ = lengths(1)
    session.execute(c)
    d, *rest = pair(1)
    session.execute(d)
    e, _ = mixed(1)
    session.execute(e)
    f, g = pair(1)
    f = g
    session.execute(f)
    first, second = pair(1)
    session.execute(second)
"""


def test_each_name_of_an_unpacked_tuple_is_what_its_position_holds() -> None:
    """Only a tuple of one length in every ``return`` types its positions (``None`` items
    aside); returns of different lengths, a starred target, disagreeing values, a name
    bound again or another position are read as they are."""
    summary = extract_source(_TUPLES, "app/queries.py", "app.queries")
    use = next(f for f in summary.functions if f.qualname == "app.queries.use")
    executed = [c.arg_types[0] if c.arg_types else "" for c in use.calls if "execute" in c.target]
    assert executed == [SELECT, SELECT, "", "", "", "", ""]
