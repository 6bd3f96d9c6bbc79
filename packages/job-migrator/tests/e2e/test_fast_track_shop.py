"""Issue 6 on a copy of examples/shop: a declared key, the notification fast track, apply --job.

The welcome mail gets ``key = "welcome:{user_id}"`` in the copy's pyproject:
``scan`` reports it ``needs_key`` on the fast track with the key in its
evidence, ``plan`` puts it in phase 2, ``apply --job`` rewrites its site with
the key and registers it for the gate, and the shop's own tests still pass in
inline mode. The unsafe refund is refused until its sign-off is recorded in
MIGRATION_PLAN.md, and then only moves with a key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from inventory.models import Idempotency, Inventory
from migrator.cli import main
from tests.e2e.test_apply_shop import git, shop_repo
from tests.e2e.test_plan_shop import sections

WELCOME = "shop.mail.send_welcome"
REFUND = "shop.payments.refund_payment"
DECLARED = f'\n[tool.migrator.jobs."{WELCOME}"]\nkey = "welcome:{{user_id}}"\n'
# The executor site keeps its inline shape: while the gate holds the job, it runs in that executor.
REWRITTEN = (
    '    send_welcome.options(idempotency_key=f"welcome:{user.id}", inline=InlineShape.EXECUTOR, '
    "executor=workers.EXECUTOR).enqueue(user.id)\n"
)


# Written into the shop copy after the move: a test that mocks the job by module path.
# The options (key, inline shape) go through .options(); the arguments through .enqueue().
MOCK_TEST = """\
from unittest import mock

from queue_runtime import InlineShape


def test_patching_the_moved_job_by_module_path_still_intercepts_it(client, outbox):
    with mock.patch("shop.routes.users.send_welcome") as mocked:
        user = client.post("/users", json={"email": "mo@example.com", "name": "Mo"}).json()
    key = f"welcome:{user['id']}"
    mocked.options.assert_called_once_with(
        idempotency_key=key, inline=InlineShape.EXECUTOR, executor=mock.ANY
    )
    mocked.options.return_value.enqueue.assert_called_once_with(user["id"])
    assert outbox == []
"""


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "300"})
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = shop_repo(tmp_path_factory.mktemp("fast_track") / "shop")
    with (root / "pyproject.toml").open("a", encoding="utf-8") as f:
        f.write(DECLARED)
    git(root, "commit", "-qam", "declare the welcome mail's key")
    code, output = cli("scan", str(root), "--no-cache")
    assert code == 0, output
    code, output = cli("plan", str(root))
    assert code == 0, output
    return root


def inventory_of(root: Path) -> Inventory:
    return Inventory.model_validate_json((root / ".migrator" / "inventory.json").read_text())


def test_scan_reports_the_welcome_mail_needs_key_on_the_fast_track_with_the_key(
    shop: Path,
) -> None:
    job = inventory_of(shop).job(WELCOME)
    assert job is not None
    assert job.idempotency is Idempotency.NEEDS_KEY
    assert job.keyless_idempotency is Idempotency.NON_IDEMPOTENT
    assert job.fast_track and job.declared_key == "welcome:{user_id}"
    messages = [e.message for e in job.evidence]
    assert any("'welcome:{user_id}'" in m and "[tool.migrator.jobs]" in m for m in messages)
    assert any(m.startswith("notification fast track") for m in messages)
    # The receipt has no declared key: still non_idempotent, fast-tracked, with a suggestion.
    receipt = inventory_of(shop).job("shop.mail.send_receipt")
    assert receipt is not None and receipt.fast_track
    assert receipt.suggested_key == "shop.mail.send_receipt:{+}"  # one key per call (issue 22)


def test_plan_puts_it_in_phase_2_with_its_declared_key(shop: Path) -> None:
    found = sections((shop / "MIGRATION_PLAN.md").read_text())
    assert f"<!-- plan:{WELCOME}/key -->" in found["phase-2"]
    assert f"<!-- plan:{WELCOME}/" not in found["phase-3"]
    assert "Declare the idempotency key `welcome:{user_id}`" in found["phase-2"]
    assert f"migrator apply --job {WELCOME}" in found["phase-2"]
    assert "notification fast track" in found["phase-2"]


def test_apply_without_job_leaves_the_mail_alone(shop: Path) -> None:
    _code, output = cli("apply", str(shop))
    assert "send_welcome.enqueue" not in output and "send_welcome.options" not in output
    assert f"--job {WELCOME}" in output  # the reason says how to opt in


def test_apply_job_rewrites_with_the_key_and_the_shop_tests_pass_inline(shop: Path) -> None:
    code, output = cli("apply", str(shop), "--job", WELCOME, "--write")
    assert code == 0, output
    assert REWRITTEN in (shop / "shop" / "routes" / "users.py").read_text()
    mail = (shop / "shop" / "mail.py").read_text()
    assert '@job(pool="batch", idempotency="non_idempotent")\ndef send_welcome(' in mail
    assert "def send_receipt(" in mail and mail.count("@job(") == 1  # only the named job moved

    mock_test = shop / "tests" / "test_mock_after_move.py"
    mock_test.write_text(MOCK_TEST)
    env = {**os.environ, "QUEUE_RUNTIME_MODE": "inline", "PYTHONPATH": str(shop)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=shop,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "passed" in proc.stdout and " failed" not in proc.stdout
    mock_test.unlink()

    git(shop, "commit", "-qam", "move the welcome mail")
    code, output = cli("apply", str(shop), "--job", WELCOME)
    assert code == 1 and "would change 0 file(s)" in output  # a second run has nothing to do


def sign(plan: Path, job: str, who: str) -> None:
    marker = f"<!-- plan:{job}/signoff -->"
    lines = plan.read_text().splitlines(keepends=True)
    [at] = [i for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    lines[at] = f"- [x] Sign-off: {who} {marker}\n"
    plan.write_text("".join(lines))


def test_the_unsafe_refund_is_refused_until_signed_off_then_needs_a_key(shop: Path) -> None:
    orders = (shop / "shop" / "routes" / "orders.py").read_text()
    key = f"{REFUND}=refund:{{order_id}}"

    code, output = cli("apply", str(shop), "--job", REFUND, "--key", key)
    assert code == 1
    assert f"not moved: {REFUND}" in output and "no sign-off recorded" in output

    sign(shop / "MIGRATION_PLAN.md", REFUND, "Ana Lopes")  # a name without a date: not signed
    code, output = cli("apply", str(shop), "--job", REFUND, "--key", key)
    assert code == 1 and "no sign-off recorded" in output

    sign(shop / "MIGRATION_PLAN.md", REFUND, "Ana Lopes, 2026-11-29")
    code, output = cli("apply", str(shop), "--job", REFUND)
    assert code == 1 and "moves only with an idempotency key" in output

    code, output = cli("apply", str(shop), "--job", REFUND, "--key", key)
    assert code == 0, output
    assert 'idempotency_key=f"refund:{order_id}"' in output
    assert 'idempotency="unsafe"' in output
    assert (shop / "shop" / "routes" / "orders.py").read_text() == orders  # --diff wrote nothing
