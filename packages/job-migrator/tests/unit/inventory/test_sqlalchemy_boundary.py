"""SQLAlchemy is described at its API (the catalogue), not read down to its internals.

With SQLAlchemy installed where the scan runs, a job calling ``session.scalars(select(...))``
was followed into the library's unit of work (``UOWTransaction``, read as money) and its
private dispatch (``impl._post_coercion``), so reads came out ``unsafe`` or ``unknown``."""

from __future__ import annotations

import pytest

from inventory import Idempotency, Inventory, scan
from inventory.models import EffectKind

pytest.importorskip("sqlalchemy")

_JOBS = """\
import threading

from sqlalchemy import and_, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Member(Base):
    __tablename__ = "members"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]


def find(session: Session, name: str):
    return session.scalars(select(Member).where(and_(Member.name == name))).all()


def join(session: Session, name: str) -> None:
    session.add(Member(name=name))
    session.commit()


def rename(session: Session, old: str, new: str) -> None:
    session.execute(update(Member).where(Member.name == old).values(name=new))
    session.commit()


def view(request):
    threading.Thread(target=find, args=(request.session, "x")).start()
    threading.Thread(target=join, args=(request.session, "x")).start()
    threading.Thread(target=rename, args=(request.session, "x", "y")).start()
"""


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("sa") / "app"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "jobs.py").write_text(_JOBS, encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


@pytest.mark.parametrize(
    ("job", "verdict", "kinds"),
    [
        ("app.jobs.find", Idempotency.IDEMPOTENT, {EffectKind.DB_READ}),
        (
            "app.jobs.join",
            Idempotency.NON_IDEMPOTENT,
            {EffectKind.DB_INSERT, EffectKind.DB_OVERWRITE},
        ),
        ("app.jobs.rename", Idempotency.IDEMPOTENT, {EffectKind.DB_OVERWRITE}),
    ],
)
def test_session_calls_are_the_effects_their_api_names(
    inventory: Inventory, job: str, verdict: Idempotency, kinds: set[EffectKind]
) -> None:
    found = inventory.job(job)
    assert found is not None
    assert {e.kind for e in found.effects} == kinds
    assert found.idempotency is verdict
    assert not any(e.api.startswith("sqlalchemy.sql.") for e in found.effects)
    assert all(not any(q.startswith("sqlalchemy.") for q in e.chain) for e in found.effects)
