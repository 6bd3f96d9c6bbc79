"""The result of ``session.execute(...)`` on a receiver no caller types: a ``Result`` when
the receiver is named like a session, and only then; never when the local could come from
another receiver's call."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency, scan

MODELS = """\
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Block(Base):
    __tablename__ = "blocks"
    id: Mapped[int] = mapped_column(primary_key=True)
"""

VIEWS = """\
import asyncio

from shop.jobs import job


async def view(request, session, other):
    asyncio.create_task(job(session, other))
"""


def _verdict(tmp_path: Path, body: str) -> tuple[Idempotency, list[str]]:
    files = {
        "shop/__init__.py": "",
        "shop/models.py": MODELS,
        "shop/views.py": VIEWS,
        "shop/jobs.py": "from sqlalchemy import select\n\nfrom shop.models import Block\n\n\n"
        + body,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    inventory = scan(tmp_path, use_cache=False, write=False, jobs=1)
    job = inventory.job("shop.jobs.job")
    assert job is not None
    return job.idempotency, [e.message for e in job.evidence]


@pytest.mark.parametrize(
    "body",
    [
        "async def job(session, other):\n"
        "    result = await session.execute(select(Block))\n"
        "    return result.scalar()\n",
        "async def job(session, other):\n"
        "    return (await session.execute(select(Block))).scalars().all()\n",
        "def job(db_session, other):\n"
        "    return db_session.execute(select(Block)).scalars().first()\n",
    ],
    ids=["kept-in-a-local", "awaited-in-place", "sync-chain"],
)
def test_a_session_named_receivers_result_is_read(tmp_path: Path, body: str) -> None:
    verdict, lines = _verdict(tmp_path, body)
    assert verdict is Idempotency.IDEMPOTENT, lines
    assert not any(line.startswith("unresolved calls") for line in lines)


@pytest.mark.parametrize(
    "body",
    [
        # the local may be what either receiver's execute returned
        "async def job(session, other):\n"
        "    result = await session.execute(select(Block))\n"
        "    if other:\n"
        "        result = await other.execute('DELETE FROM blocks')\n"
        "    return result.scalar()\n",
        # a receiver not named like a session: its execute is no SQLAlchemy session's
        "async def job(session, other):\n"
        "    result = await other.execute(select(Block))\n"
        "    return result.scalar()\n",
    ],
    ids=["two-receivers", "not-a-session"],
)
def test_otherwise_the_result_stays_unknown(tmp_path: Path, body: str) -> None:
    verdict, lines = _verdict(tmp_path, body)
    assert verdict is not Idempotency.IDEMPOTENT, lines
    assert any("result.scalar" in line for line in lines), lines
