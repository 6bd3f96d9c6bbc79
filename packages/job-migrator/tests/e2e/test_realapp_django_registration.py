"""django-registration 5.2.1 (a Django app by others, with its own suite) through the tool (issue 11).

Slow: ``realapps/setup.sh`` downloads the pinned sdist and builds its venv. The app
sends its activation mail in-process, in the registration request
(``RegistrationView.create_inactive_user`` -> ``self.send_activation_email(user)`` ->
``user.email_user``).

- ``test_the_unmigrated_suite_passes_through_the_harness``: 90 passed.
- ``test_django_registration_scan_plan_and_apply``: the scan finds the activation mail,
  the plan puts both mail jobs on the notification fast track with a key (its JSON
  says which), and ``migrator apply --job ... --key ...`` with those keys refuses to
  move them, with the reason, and writes nothing: both jobs are methods of the
  class-based view, whose instance is built per request and read by the mail code
  (``self.request`` for the site, the templates), so no worker can rebuild it. The
  suite still passes. What would move it is a change by hand (a module-level function
  of the user's id), see docs/realapps.md.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.e2e.realapps.harness import OWN, AppTree, migrator, prepare, run_suite, workspace

pytestmark = pytest.mark.slow
SUITE = (90, 0, 0)
VIEWS = "django_registration.backends.activation.views.RegistrationView"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> AppTree:
    home = workspace(tmp_path_factory.mktemp("realapps"))
    return prepare("django-registration", OWN, home)


def test_the_unmigrated_suite_passes_through_the_harness(tree: AppTree) -> None:
    counts = run_suite(tree)
    assert (counts.passed, counts.failed, counts.skipped) == SUITE


def _digest(root: Path) -> str:
    files = sorted(root.rglob("*.py"))
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


def test_django_registration_scan_plan_and_apply(tree: AppTree) -> None:
    code = tree.src / "src"
    scan = migrator("scan", ".", cwd=code)
    inventory = json.loads((code / ".migrator" / "inventory.json").read_text())
    mail = [s for s in inventory["sites"] if "activation" in s["location"]["path"]]
    assert mail, scan.stdout
    plan = migrator("plan", ".", cwd=code)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    document = json.loads((code / ".migrator" / "plan.json").read_text())
    groups = [g for p in document["phases"] for g in p["groups"] if g["fast_track"]]
    assert f"{VIEWS}.send_activation_email" in {g["job"] for g in groups}
    before = _digest(code)
    for group in groups:
        (item,) = [i for i in group["items"] if i["id"] == f"{group['job']}/apply"]
        assert item["key"], group
        key = f"{group['job']}={item['key']}"
        applied = migrator(
            "apply", ".", "--write", "--allow-dirty", "--job", group["job"], "--key", key, cwd=code
        )
        out = applied.stdout + applied.stderr
        assert applied.returncode == 1, out  # nothing applicable
        said = f"not moved: {group['job']}: bound method: the instance cannot be serialised"
        assert "".join(said.split()) in "".join(out.split()), out  # rich wraps long lines
    assert _digest(code) == before  # nothing written
    counts = run_suite(tree, {"QUEUE_RUNTIME_MODE": "inline"})
    assert (counts.passed, counts.failed, counts.skipped) == SUITE
