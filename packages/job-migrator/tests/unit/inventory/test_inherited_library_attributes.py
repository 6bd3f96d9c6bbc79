"""A project class that extends a library class inherits what the scan knows of its
attributes: ``class AppDB(flask_sqlalchemy.SQLAlchemy)``'s ``db.session`` is SQLAlchemy's
Session, as ``SQLAlchemy().session`` is (so ``flush`` and ``add`` are the session's). A
subclass that defines ``session`` itself is read as the project wrote it."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

CORE = """import requests
from flask_sqlalchemy import SQLAlchemy


class AppDB(SQLAlchemy):
    def init_app(self, app):
        super().init_app(app)


class Base(SQLAlchemy):
    pass


class Deeper(Base):
    pass


class OwnSession(SQLAlchemy):
    @property
    def session(self):
        return Outbox()


class Outbox:
    def flush(self):
        requests.post("https://hooks.example.com/flush")


db = AppDB()
deep = Deeper()
own = OwnSession()
"""
JOBS = """import threading

from core import db, deep, own


def save(row):
    db.session.add(row)
    db.session.flush()


def save_deep(row):
    deep.session.flush()


def save_own(row):
    own.session.flush()


def view(request):
    threading.Thread(target=save, args=(1,)).start()
    threading.Thread(target=save_deep, args=(1,)).start()
    threading.Thread(target=save_own, args=(1,)).start()
"""


def _apis(scan_project: Scanner) -> dict[str, set[str]]:
    inventory = scan_project({"core.py": CORE, "jobs.py": JOBS})
    return {j.qualname: {e.api for e in j.effects} for j in inventory.jobs}


def test_a_subclass_of_flask_sqlalchemy_has_its_session(scan_project: Scanner) -> None:
    apis = _apis(scan_project)
    assert {"sqlalchemy.orm.Session.add", "sqlalchemy.orm.Session.flush"} <= apis["jobs.save"]
    assert "sqlalchemy.orm.Session.flush" in apis["jobs.save_deep"]  # through a project base


def test_a_session_the_subclass_defines_is_the_projects(scan_project: Scanner) -> None:
    inventory = scan_project({"core.py": CORE, "jobs.py": JOBS})
    job = inventory.job("jobs.save_own")
    assert job is not None
    assert "sqlalchemy.orm.Session.flush" not in {e.api for e in job.effects}
    assert EffectKind.HTTP_POST in {e.kind for e in job.effects}  # Outbox.flush, followed
