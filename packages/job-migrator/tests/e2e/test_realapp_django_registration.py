"""django-registration 5.2.1 (a Django app by others, with its own suite) migrated (issue 11).

Slow: ``realapps/setup.sh`` downloads the pinned sdist and builds its venv. The app
sends its activation mail in-process, in the registration request
(``ActivationView.send_activation_email`` -> ``user.email_user``).

- ``test_the_unmigrated_suite_passes_through_the_harness``: 90 passed.
- ``test_django_registration_end_to_end``: scan finds the activation mail, plan and
  apply move it, the suite passes inline and with real workers
  (``--django-settings``). It fails today at the apply step (see its xfail reason).
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.realapps.harness import OWN, AppTree, migrator, prepare, run_suite, workspace

pytestmark = pytest.mark.slow
SUITE = (90, 0, 0)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> AppTree:
    home = workspace(tmp_path_factory.mktemp("realapps"))
    return prepare("django-registration", OWN, home)


def test_the_unmigrated_suite_passes_through_the_harness(tree: AppTree) -> None:
    counts = run_suite(tree)
    assert (counts.passed, counts.failed, counts.skipped) == SUITE


@pytest.mark.xfail(
    reason=(
        "issue 11 is not done: the scan finds the activation mail (user.email_user), but"
        " apply moves none of the 3 jobs without --job and a key (see docs/realapps.md)"
    ),
    strict=True,
)
def test_django_registration_end_to_end(tree: AppTree) -> None:
    code = tree.src / "src"
    scan = migrator("scan", ".", cwd=code)
    inventory = json.loads((code / ".migrator" / "inventory.json").read_text())
    mail = [s for s in inventory["sites"] if "activation" in s["location"]["path"]]
    assert mail, scan.stdout
    applied = migrator("apply", ".", "--write", "--allow-dirty", cwd=code)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "--django-settings" in applied.stdout  # what the workers need
    counts = run_suite(tree, {"QUEUE_RUNTIME_MODE": "inline"})
    assert (counts.passed, counts.failed, counts.skipped) == SUITE
