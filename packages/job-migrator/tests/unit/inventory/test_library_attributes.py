"""Attributes whose class the library documents: a path's ``parent`` is a path, a
``CompletedProcess``'s ``stdout`` is its captured output (a string), Flask-SQLAlchemy's
``db.session`` a session. A method called through them is the class's.

Adversaries: the same attribute on a project class, and on an untyped value, stay undecided.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts, thread_views

JOBS = (
    "import subprocess\n"
    "from pathlib import Path\n\n"
    "from app.helpers import Tree\n\n\n"
    "def config_root(start):\n"
    "    here = Path(start)\n"
    "    return here.parent.parent.resolve()\n\n\n"
    "def head_sha(result: subprocess.CompletedProcess):\n"
    "    return result.stdout.strip().split()\n\n\n"
    "def project_parent(start):\n"
    "    return Tree(start).parent.resolve()\n\n\n"
    "def untyped(box):\n"
    "    return box.parent.resolve()\n"
)
HELPERS = (
    "import requests\n\n\n"
    "class Node:\n"
    "    def resolve(self):\n"
    "        requests.post('https://hooks.example.com/resolve')\n\n\n"
    "class Tree:\n"
    "    def __init__(self, start):\n"
    "        self.parent = start\n"
)
NAMES = ("config_root", "head_sha", "project_parent", "untyped")


def test_methods_through_documented_attributes_are_the_class_methods(
    app_verdicts: Verdicts,
) -> None:
    verdicts = app_verdicts(jobs=JOBS, helpers=HELPERS, views=thread_views(NAMES))
    assert {name: verdicts[name] for name in NAMES} == {
        "config_root": Idempotency.IDEMPOTENT,
        "head_sha": Idempotency.IDEMPOTENT,
        "project_parent": Idempotency.UNKNOWN,
        "untyped": Idempotency.UNKNOWN,
    }


CALLS = (
    "import requests\n"
    "from pydantic import SecretStr\n\n\n"
    "def fetch_status(token: SecretStr, url):\n"
    "    session = requests.session()\n"
    "    session.headers['Authorization'] = token.get_secret_value()\n"
    "    return session.get(url).status_code\n"
)


def test_a_session_made_by_requests_session_and_a_secret_read(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=CALLS, views=thread_views(("fetch_status",)))
    assert verdicts["fetch_status"] == Idempotency.IDEMPOTENT  # one GET
