"""Flask-SQLAlchemy instances cross by reference: the runtime's model codec, no by-id wrapper.

Whatever the key type, and whether the instance was loaded, changed or built:
the site enqueues the instance as it is, and the outcome says how it crosses
(a model instance, by reference; one built here may have no row yet, and then
the call falls back to running in-process).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Crossing, SiteOutcome, Status, plan_apply
from inventory.models import Argument, Pattern
from tests.unit.codemods.conftest import build_inventory

EXT = """from flask_sqlalchemy import SQLAlchemy

db = SQLAlchemy()
"""

MODELS = """from app.ext import db


class Project(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(64))


class Tag(db.Model):
    code = db.Column(db.String(8), primary_key=True)


class Day(db.Model):
    date = db.Column(db.Date, primary_key=True)
"""

MAIL = """from app.models import Day, Project, Tag


def notify(project: Project, subject):
    ...


def tagged(tag: Tag):
    ...


def dated(day: Day):
    ...
"""

FORMS = """from app.models import Project


class ProjectForm:
    def save(self):
        project = Project(name="x")
        return project
"""

VIEWS = """from app.mail import dated, notify, tagged
from app.ext import db
from app.forms import ProjectForm
from app.models import Day, Project, Tag


def created(project_id: int):
    project = Project.query.filter_by(id=project_id).first()
    notify(project, "Created")


def fetched(project_id: int):
    project = db.session.get(Project, project_id)
    notify(project, "Fetched")


def renamed(project_id: int):
    project = Project.query.get(project_id)
    project.name = "x"
    notify(project, "Renamed")


def built(name: str):
    project = Project(name=name)
    db.session.add(project)
    notify(project, "Built")


def by_code(code: str):
    tag = Tag.query.get(code)
    tagged(tag)


def by_date(when: str):
    day = Day.query.get(when)
    dated(day)


def committed(name: str):
    project = Project(name=name)
    db.session.add(project)
    db.session.commit()
    notify(project, "Committed")


def from_form():
    form = ProjectForm()
    project = form.save()
    db.session.add(project)
    db.session.commit()
    notify(project, "Form")


def form_not_committed():
    form = ProjectForm()
    project = form.save()
    notify(project, "Uncommitted form")
"""


def _plan(root: Path, line: str, job: str, *sources: str) -> tuple[SiteOutcome, dict[str, str]]:
    inventory = build_inventory(root, [("app/views.py", line, Pattern.DIRECT_CALL, job)])
    inventory.sites[0].arguments = [
        Argument(name=f"#{i}", source=s, serialisable=None) for i, s in enumerate(sources)
    ]
    result = plan_apply(root, inventory, scanner=None)
    [outcome] = result.outcomes
    return outcome, {c.path: c.after for c in result.changes}


def _app(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files(
        {
            "app/__init__.py": "",
            "app/ext.py": EXT,
            "app/models.py": MODELS,
            "app/mail.py": MAIL,
            "app/forms.py": FORMS,
            "app/views.py": VIEWS,
        }
    )


@pytest.mark.parametrize(
    ("line", "job", "sources", "model", "built"),
    [
        ('"Created")', "app.mail.notify", ("project", '"Created"'), "Project", False),
        ('"Fetched")', "app.mail.notify", ("project", '"Fetched"'), "Project", False),
        ('"Renamed")', "app.mail.notify", ("project", '"Renamed"'), "Project", False),
        ('"Built")', "app.mail.notify", ("project", '"Built"'), "Project", True),
        ("tagged(tag)", "app.mail.tagged", ("tag",), "Tag", False),
        ("dated(day)", "app.mail.dated", ("day",), "Day", False),
    ],
)
def test_an_instance_is_enqueued_as_it_is_and_crosses_by_reference(
    write_files: Callable[[dict[str, str]], Path],
    line: str,
    job: str,
    sources: tuple[str, ...],
    model: str,
    built: bool,
) -> None:
    root = _app(write_files)

    outcome, after = _plan(root, line, job, *sources)

    assert outcome.status is Status.REWRITTEN, outcome.reason
    name = job.rsplit(".", 1)[1]
    assert f"{name}.enqueue({', '.join(sources)})" in after["app/views.py"]
    assert "by_id" not in "".join(after.values())
    crossing = outcome.crossings[0]
    assert crossing.how is Crossing.CODEC
    assert crossing.detail.startswith(f"model instance (app.models.{model}), by reference")
    assert ("an unsaved one falls back to running in-process" in crossing.detail) is built
