"""Building a query is not I/O: SQLAlchemy's column operators on a mapped class's
attribute (``Registration.email.in_(...)``, ``.desc()``, ``.ilike()``...) and Flask's
``g.get(...)`` explain themselves, so a job doing nothing else stays ``idempotent``; the
same method names on a class that is not mapped (or on Django's manager) stay gaps.

Each source is a small reproduction written for the test (never a package's code).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from inventory import Job, scan

MODELS = """
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import Column, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, declarative_base, mapped_column

db = SQLAlchemy()
Legacy = declarative_base()


class Base(DeclarativeBase):
    pass


class Registration(db.Model):
    email = db.Column(db.String)
    submitted_dt = db.Column(db.DateTime)


class Order(Base):
    __tablename__ = "orders"
    status: Mapped[str] = mapped_column(String)


class Ticket(Legacy):
    __tablename__ = "tickets"
    code = Column(String)

    @classmethod
    def matching(cls, codes):
        return cls.code.in_(codes)


class Columns:
    code = Column(Integer)  # a class declaring columns, whatever its base


class Plain:
    tags = None
"""

JOBS = """
import threading

from flask import g
from sqlalchemy import and_, func, or_, select

from app.models import Columns, Order, Plain, Registration, Ticket


def build(emails):
    crit = and_(Registration.email.in_(emails), Registration.email.is_(None))
    order = Registration.submitted_dt.desc()
    paid = or_(Order.status.ilike("%paid%"), Order.status.between("a", "b"))
    stmt = select(Order).where(Order.status.startswith("x"), func.count(Order.status) > 1)
    return crit, order, paid, stmt, Ticket.matching(["a"]), Columns.code.asc(), g.get("user")


def tagged():
    return Plain.tags.contains("x")


def view(request):
    threading.Thread(target=build, args=(["a@b.c"],)).start()
    threading.Thread(target=tagged).start()
"""


def _jobs(tmp_path: Path) -> dict[str, Job]:
    for rel, text in {"app/__init__.py": "", "app/models.py": MODELS, "app/jobs.py": JOBS}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return {job.qualname: job for job in scan(tmp_path, use_cache=False, jobs=1).jobs}


def test_column_operators_on_mapped_classes_and_flask_g_are_no_io(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path)
    built = jobs["app.jobs.build"]
    assert built.idempotency.value == "idempotent", [e.message for e in built.evidence]
    tagged = jobs["app.jobs.tagged"]
    assert tagged.idempotency.value == "unknown"  # Plain is not mapped: a gap stays
    assert any("Plain.tags.contains" in e.message for e in tagged.evidence)


def test_loguru_and_a_compiled_jsonpath_are_no_effect(tmp_path: Path) -> None:
    """``loguru.logger.*`` is a log line like ``logging.*``; ``jsonpath_ng.ext.parse``
    compiles an expression: catalogued pure, whether or not the libraries are installed."""
    job = """
    import threading

    from jsonpath_ng.ext import parse
    from loguru import logger

    def extract(doc):
        logger.debug("extracting")
        return [m.value for m in parse("$.rates[*]").find(doc)]

    def view(request):
        threading.Thread(target=extract, args=({},)).start()
    """
    for rel, text in {"app/__init__.py": "", "app/jobs.py": job}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    jobs = {j.qualname: j for j in scan(tmp_path, use_cache=False, jobs=1).jobs}
    evidence = [e.message for e in jobs["app.jobs.extract"].evidence]
    assert not any("loguru" in m or "jsonpath" in m for m in evidence), evidence
