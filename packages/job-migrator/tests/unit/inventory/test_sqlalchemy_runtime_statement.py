"""A session's ``execute(stmt)`` whose statement the scan cannot type is one gap at the API.

Written from SQLAlchemy 2.0's documented API (``Session.execute``, ``AsyncSession.execute``:
"Execute a SQL expression construct"): what the call does is what the statement is, and a
statement handed in as a parameter is only known at run time. Before, the catalogue's
entry gave no effect for such a call, so the scan read the installed library behind it
and reported SQLAlchemy's internals (``_concurrency_shim.getcurrent``,
``exc.AwaitRequired``, ``context.throw``) as the job's gaps."""

from __future__ import annotations

import pytest

from inventory import Idempotency, Inventory, scan
from inventory._catalogue import Catalogue
from inventory.models import EffectKind
from inventory.summary import CallInfo, ReceiverKind, Span

pytest.importorskip("sqlalchemy")

_JOBS = """\
import asyncio
import threading

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session, sessionmaker

SessionLocal = sessionmaker()
AsyncSessionLocal = async_sessionmaker(create_async_engine("postgresql+asyncpg://h/app"))


async def run_async(stmt):
    async with AsyncSessionLocal() as session:
        await session.execute(stmt)


def run_sync(session: Session, stmt):
    session.execute(stmt)


def read_typed(session: Session, table):
    session.execute(select(table))


def spawn(request, stmt):
    asyncio.create_task(run_async(stmt))
    threading.Thread(target=run_sync, args=(request.session, stmt)).start()
    threading.Thread(target=read_typed, args=(request.session, "t")).start()
"""


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("sa_stmt") / "app"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "jobs.py").write_text(_JOBS, encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


@pytest.mark.parametrize(
    ("job", "api"),
    [
        ("app.jobs.run_async", "sqlalchemy.ext.asyncio.AsyncSession.execute"),
        ("app.jobs.run_sync", "sqlalchemy.orm.Session.execute"),
    ],
)
def test_an_untyped_statement_is_one_gap_at_the_session_api(
    inventory: Inventory, job: str, api: str
) -> None:
    found = inventory.job(job)
    assert found is not None
    assert found.idempotency is Idempotency.UNKNOWN
    assert found.effects == []  # nothing read from SQLAlchemy's internals
    lines = [e.message for e in found.evidence]
    gaps = [m for m in lines if m.startswith("unresolved calls")]
    assert gaps == [
        "unresolved calls (catalogued, but what they do depends on a value only known at "
        f"run time, such as a statement the scan could not type): {api}"
    ]
    assert not any("_concurrency_shim" in m or "context." in m for m in lines)


def test_a_typed_statement_still_says_what_it_does(inventory: Inventory) -> None:
    found = inventory.job("app.jobs.read_typed")
    assert found is not None
    assert [e.kind for e in found.effects] == [EffectKind.DB_READ]
    assert found.idempotency is Idempotency.IDEMPOTENT


def _call(target: str, source: str) -> CallInfo:
    return CallInfo(
        target=target,
        receiver=ReceiverKind.INSTANCE,
        receiver_source="session",
        span=Span(line=1, column=0),
        args=["<expr>"],
        arg_sources=[source],
    )


def test_the_catalogue_names_the_undecided_statement() -> None:
    catalogue = Catalogue.load()
    name = "sqlalchemy.orm.Session.execute"
    why = catalogue.undecided(_call(name, "stmt"), name)
    assert why == (
        "the statement `stmt` is only known at run time: what this call does depends on it"
    )
    assert catalogue.explains(_call(name, "stmt"), name)
    # A statement the entry reads is no boundary gap: it has an effect.
    assert catalogue.undecided(_call(name, "select(User)"), name) is None


def test_a_method_matched_by_its_name_alone_is_no_boundary() -> None:
    """``storage.open(name, mode)``: the receiver is known by its name only (a ``?.`` entry),
    and may be a project class whose source the scan reads."""
    call = _call("?.open", "name").model_copy(update={"receiver_source": "storage"})
    assert Catalogue.load().undecided(call, "?.open") is None
