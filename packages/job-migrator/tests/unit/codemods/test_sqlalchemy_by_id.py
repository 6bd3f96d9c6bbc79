"""By-id for Flask-SQLAlchemy: a ``db.Model`` instance goes by its key, re-fetched in a wrapper.

The same "provably the same object" rules as the Django form: loaded from the
database (``Model.query...``, ``db.session.get``) or built and then committed
(``db.session.commit()`` before the site, in its block), bound once, no
attribute written and no method called on it before the site, an integer or a
string primary key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
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


def _plan(root: Path, line: str, job: str, *sources: str) -> tuple[Status, str, dict[str, str]]:
    inventory = build_inventory(root, [("app/views.py", line, Pattern.DIRECT_CALL, job)])
    inventory.sites[0].arguments = [
        Argument(name=f"#{i}", source=s, serialisable=None) for i, s in enumerate(sources)
    ]
    result = plan_apply(root, inventory, scanner=None)
    [outcome] = result.outcomes
    return outcome.status, outcome.reason, {c.path: c.after for c in result.changes}


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


def test_a_loaded_instance_goes_by_its_key_and_the_wrapper_uses_the_session(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)

    status, reason, after = _plan(root, '"Created"', "app.mail.notify", "project", '"Created"')

    assert (status, reason) == (Status.REWRITTEN, "")
    assert 'notify_by_id.enqueue(project.id, "Created")' in after["app/views.py"]
    mail = after["app/mail.py"]
    assert "def notify_by_id(project_id: int, subject):" in mail
    assert "    from app.ext import db\n    from app.models import Project\n" in mail
    assert "    project = db.session.get(Project, project_id)\n" in mail
    assert "    return notify(project=project, subject=subject)\n" in mail
    assert mail.count("@job(") == 1


def test_db_session_get_is_a_load(write_files: Callable[[dict[str, str]], Path]) -> None:
    root = _app(write_files)

    status, _reason, after = _plan(root, '"Fetched"', "app.mail.notify", "project", '"Fetched"')

    assert status is Status.REWRITTEN
    assert 'notify_by_id.enqueue(project.id, "Fetched")' in after["app/views.py"]


def test_a_string_key_goes_as_a_string(write_files: Callable[[dict[str, str]], Path]) -> None:
    root = _app(write_files)

    status, reason, after = _plan(root, "tagged(tag)", "app.mail.tagged", "tag")

    assert (status, reason) == (Status.REWRITTEN, "")
    assert "tagged_by_id.enqueue(tag.code)" in after["app/views.py"]
    assert "def tagged_by_id(tag_id: str):" in after["app/mail.py"]


def test_an_instance_built_then_committed_has_its_row(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    for line in ('"Committed"', '"Form"'):  # the form's save() returns the model it builds
        status, reason, after = _plan(root, line, "app.mail.notify", "project", line)

        assert (status, reason) == (Status.REWRITTEN, ""), line
        assert f"notify_by_id.enqueue(project.id, {line})" in after["app/views.py"]


def test_changed_built_or_non_integer_keyed_instances_are_skipped(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    cases = {
        '"Renamed"': ("app.mail.notify", ("project", '"Renamed"'), "no change to `project`"),
        '"Built"': ("app.mail.notify", ("project", '"Built"'), "it is built here"),
        '"Uncommitted form"': (
            "app.mail.notify",
            ("project", '"Uncommitted form"'),
            "it is built here",
        ),
        "dated(day)": ("app.mail.dated", ("day",), "its primary key is not an integer or a string"),
    }
    for line, (job, sources, why) in cases.items():
        status, reason, after = _plan(root, line, job, *sources)

        assert status is Status.SKIPPED and after == {}, line
        assert why in reason, reason
