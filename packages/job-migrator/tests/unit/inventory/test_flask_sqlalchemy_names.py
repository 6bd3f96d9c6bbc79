"""Flask-SQLAlchemy's ``db`` hands on SQLAlchemy's names: ``db.select``, ``db.func``,
``db.and_``, ``db.aliased`` are ``sqlalchemy``'s and ``sqlalchemy.orm``'s.

Written from Flask-SQLAlchemy 3.1's ``SQLAlchemy.__getattr__`` (a public name the
extension does not define is looked up in ``sqlalchemy``, then ``sqlalchemy.orm``;
``db.event`` is ``sqlalchemy.event``) and its docs' quick start, not from a scanned
project. Before, every such call was "no source read" and a job that only counted rows
with ``db.select(db.func.count(...))`` was ``unknown``; the statement it built was of
unknown type, so ``db.session.execute`` could not say read or write either."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory
from inventory._extract._library import library_attribute

pytest.importorskip("sqlalchemy")

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import threading

import requests

from flask import Flask
from flask_sqlalchemy import SQLAlchemy

app = Flask(__name__)
db = SQLAlchemy(app)


class Entry(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String)
    hits = db.Column(db.Integer)


class Own(SQLAlchemy):
    def select(self, *args):
        requests.post("https://hooks.example.com/select", json=list(args))


own = Own()


def count():
    statement = db.select(db.func.count(Entry.id)).where(db.and_(Entry.id > 1, db.not_(Entry.hits)))
    total = db.session.execute(statement).scalar()
    rows = db.session.scalars(db.select(Entry).order_by(db.desc(Entry.id)).limit(5)).all()
    return total, rows


def rename(entry_id, name):
    db.session.execute(db.update(Entry).where(Entry.id == entry_id).values(name=name))
    db.session.commit()


def log_hit(name):
    db.session.execute(db.insert(Entry).values(name=name, hits=1))
    db.session.commit()


def project_select():
    return own.select(1)


def view():
    threading.Thread(target=count).start()
    threading.Thread(target=rename, args=(1, "a")).start()
    threading.Thread(target=log_hit, args=("a",)).start()
    threading.Thread(target=project_select).start()
    return "ok"
"""


def test_names_go_to_the_module_flask_sqlalchemy_takes_them_from() -> None:
    fsa = "flask_sqlalchemy.SQLAlchemy"
    assert library_attribute(f"{fsa}.select().where") == "sqlalchemy.select().where"
    assert library_attribute(f"{fsa}.func.count") == "sqlalchemy.func.count"
    assert library_attribute(f"{fsa}.aliased") == "sqlalchemy.orm.aliased"  # only in the ORM
    assert library_attribute(f"{fsa}.event.listens_for") == "sqlalchemy.event.listens_for"
    assert library_attribute(f"{fsa}.session.add") == "sqlalchemy.orm.Session.add"
    assert library_attribute("flask_sqlalchemy.extension.SQLAlchemy.or_") == "sqlalchemy.or_"
    # What the extension defines itself, and private names it refuses, stay its own.
    for own in ("create_all", "get_or_404", "paginate", "Model", "engine", "_make_engine"):
        assert library_attribute(f"{fsa}.{own}") == f"{fsa}.{own}"


def test_a_job_built_on_db_names_gets_a_verdict(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    counted = jobs["app.count"]
    assert counted.idempotency is Idempotency.IDEMPOTENT, counted.evidence
    assert {e.api for e in counted.effects} >= {
        "sqlalchemy.orm.Session.execute",
        "sqlalchemy.orm.Session.scalars",
    }
    # The statement is typed, so the session's execute says what it does: an UPDATE of
    # named columns overwrites (a retry writes the same values), an INSERT adds a row.
    assert jobs["app.rename"].idempotency is Idempotency.IDEMPOTENT, jobs["app.rename"].evidence
    assert jobs["app.log_hit"].idempotency is Idempotency.NON_IDEMPOTENT


def test_a_project_subclass_that_defines_the_name_is_read_as_written(
    scan_project: Scanner,
) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    # Own.select is the project's (it posts), not sqlalchemy.select.
    apis = {e.api for e in jobs["app.project_select"].effects}
    assert "requests.post" in apis and "sqlalchemy.select" not in apis
    assert jobs["app.project_select"].idempotency is Idempotency.NON_IDEMPOTENT


CORE = """from flask_sqlalchemy import SQLAlchemy


class IndicoSQLAlchemy(SQLAlchemy):
    def enforce_constraints(self):
        pass


db = IndicoSQLAlchemy()
"""

JOBS = """import threading

from app.core import db


def newest(model):
    return db.select(model).order_by(db.desc(model.id)).limit(1)


def view():
    threading.Thread(target=newest, args=(1,)).start()
"""


def test_names_an_imported_project_subclass_inherits_are_sqlalchemys(
    scan_project: Scanner,
) -> None:
    """indico's ``db = IndicoSQLAlchemy(...)``, imported through its package: ``db.desc`` and
    ``db.select`` are not the subclass's own, so the extension hands them on (before, only
    attributes of attributes, ``db.session.flush``, were; a method called on ``db`` was a
    gap)."""
    inventory = scan_project({"app/__init__.py": "", "app/core.py": CORE, "app/jobs.py": JOBS})
    job = inventory.job("app.jobs.newest")
    assert job is not None and not job.unexplained, job and job.unexplained
    assert job.idempotency is Idempotency.IDEMPOTENT
