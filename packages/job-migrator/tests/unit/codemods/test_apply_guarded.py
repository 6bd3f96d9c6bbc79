"""``migrator apply --job`` for non-idempotent and unsafe jobs with a key (issue 6)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods import ApplyOptions, Status, plan_apply
from codemods._changes.pr import render
from codemods._config import KeyDoesNotFit
from inventory.models import Idempotency, Inventory, Pattern, UnexplainedCall
from migrator.cli.apply import apply

N, U, K = Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE, Idempotency.NEEDS_KEY

APP = """\
def send_welcome(user_id):
    return user_id


def refund(order_id, amount):
    return order_id


def signup(user):
    send_welcome(user.id)


def refund_view(order):
    refund(order.id, order.total)
"""

SIGNED = "- [x] Sign-off: Ana Lopes, 2026-11-29 <!-- plan:app.refund/signoff -->\n"
BLANK = "- [ ] Sign-off: ____ (name, date) <!-- plan:app.refund/signoff -->\n"


@pytest.fixture
def project(tmp_path: Path, build_inventory: Callable[..., Inventory]) -> Path:
    (tmp_path / "app.py").write_text(APP)
    sites = [
        ("app.py", "    send_welcome(user.id)", Pattern.DIRECT_CALL, "app.send_welcome"),
        ("app.py", "    refund(order.id", Pattern.DIRECT_CALL, "app.refund"),
    ]
    inventory = build_inventory(tmp_path, sites, {"app.send_welcome": N, "app.refund": U})
    (tmp_path / ".migrator").mkdir()
    (tmp_path / ".migrator" / "inventory.json").write_text(inventory.model_dump_json())
    return tmp_path


def inventory_of(root: Path) -> Inventory:
    return Inventory.model_validate_json((root / ".migrator" / "inventory.json").read_text())


def declare(root: Path, job: str, key: str) -> None:
    with (root / "pyproject.toml").open("a") as f:
        f.write(f'[tool.migrator.jobs."{job}"]\nkey = "{key}"\n')


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(apply, list(args), env={"COLUMNS": "300"})
    return result.exit_code, result.output


def test_never_by_default_even_with_a_declared_key(project: Path) -> None:
    declare(project, "app.send_welcome", "welcome:{user_id}")
    result = plan_apply(project, inventory_of(project), ApplyOptions())
    assert not result.changes
    [why] = [o.reason for o in result.outcomes if o.site.job == "app.send_welcome"]
    assert "non_idempotent" in why and "--job app.send_welcome" in why


def test_named_without_a_key_is_refused_with_the_way_to_declare_one(project: Path) -> None:
    code, out = run(str(project), "--job", "app.send_welcome")
    assert code == 1
    assert "not moved: app.send_welcome" in out and "moves only with an idempotency key" in out


def test_named_with_a_declared_key_rewrites_with_the_key_and_registers_the_guard(
    project: Path,
) -> None:
    declare(project, "app.send_welcome", "welcome:{user_id}")
    result = plan_apply(project, inventory_of(project), ApplyOptions(jobs=("app.send_welcome",)))
    [change] = result.changes
    assert (
        '    send_welcome.enqueue(user.id, idempotency_key=f"welcome:{user.id}")\n' in change.after
    )
    assert '@job(pool="batch", idempotency="non_idempotent")\ndef send_welcome(' in change.after
    assert "    refund(order.id, order.total)\n" in change.after  # not named: untouched
    text = render("b", result.jobs, result, inventory_of(project))
    assert "alters no behaviour until the job is certified" in text
    assert "mock.patch" in text


def test_a_needs_key_verdict_over_a_non_idempotent_job_also_needs_job(
    project: Path, build_inventory: Callable[..., Inventory]
) -> None:
    inventory = inventory_of(project)
    job = inventory.job("app.send_welcome")
    assert job is not None
    job.idempotency, job.keyless_idempotency = K, N
    declare(project, "app.send_welcome", "welcome:{user_id}")
    assert not plan_apply(project, inventory, ApplyOptions()).changes
    named = plan_apply(project, inventory, ApplyOptions(jobs=("app.send_welcome",)))
    assert 'idempotency="non_idempotent"' in named.changes[0].after


def test_a_key_function_is_called_with_the_sites_arguments_and_imported(project: Path) -> None:
    # Issue 12: the key function must exist in the project and take the job's parameters
    # (read statically, never imported: app/keys.py is only parsed).
    (project / "app").mkdir()
    (project / "app" / "keys.py").write_text("def welcome(user_id):\n    return f'w{user_id}'\n")
    options = ApplyOptions(
        jobs=("app.send_welcome",), keys={"app.send_welcome": "app.keys:welcome"}
    )
    [change] = plan_apply(project, inventory_of(project), options).changes
    assert "    send_welcome.enqueue(user.id, idempotency_key=welcome(user.id))\n" in change.after
    assert "from app.keys import welcome\n" in change.after


def test_unsafe_is_refused_without_a_recorded_sign_off_then_accepted_with_one_and_a_key(
    project: Path,
) -> None:
    (project / "MIGRATION_PLAN.md").write_text(BLANK)
    code, out = run(str(project), "--job", "app.refund", "--key", "app.refund=refund:{order_id}")
    assert code == 1
    assert "not moved: app.refund" in out and "no sign-off recorded" in out
    assert (project / "app.py").read_text() == APP

    (project / "MIGRATION_PLAN.md").write_text(SIGNED)
    code, out = run(str(project), "--job", "app.refund")
    assert code == 1 and "moves only with an idempotency key" in out  # signed, but no key

    code, out = run(
        str(project), "--job", "app.refund", "--key", "app.refund=refund:{order_id}", "--write"
    )
    assert code == 0, out
    after = (project / "app.py").read_text()
    assert (
        '    refund.enqueue(order.id, order.total, idempotency_key=f"refund:{order.id}")' in after
    )
    assert '@job(pool="batch", idempotency="unsafe")' in after


def undecided(root: Path) -> Inventory:
    """The fixture's inventory with ``app.send_welcome`` undecided: one call not followed."""
    inventory = inventory_of(root)
    job = inventory.job("app.send_welcome")
    assert job is not None
    job.idempotency = Idempotency.UNKNOWN
    job.unexplained = [
        UnexplainedCall(
            call="profile.rebuild_badges", entry="?.rebuild_badges", receiver="^profile$"
        )
    ]
    return inventory


def test_an_unknown_job_stays_unless_named(project: Path) -> None:
    """By default an undecided job is never touched: it may be non-idempotent behind the call
    the scan could not follow. The reason says what decides it, and that naming it moves it held."""
    result = plan_apply(project, undecided(project), ApplyOptions())
    assert not result.changes
    (outcome,) = [o for o in result.outcomes if o.site.job == "app.send_welcome"]
    assert outcome.status is Status.SKIPPED
    assert outcome.reason.startswith("job idempotency is unknown: the scan could not follow")
    assert "(--job app.send_welcome, or --hold-unknown for every such job) to move it held" in (
        outcome.reason
    )


def test_an_unknown_job_named_moves_held_inline_by_the_gate(project: Path) -> None:
    """Moved, never async on its own: declared ``unknown`` (the runtime holds it inline until
    its verdict is decided or a load test certifies it), and the outcome says what decides it."""
    inventory = undecided(project)
    result = plan_apply(project, inventory, ApplyOptions(jobs=("app.send_welcome",)))
    after = result.changes[0].after
    assert "    send_welcome.enqueue(user.id)" in after
    assert '@job(pool="batch", idempotency="unknown")\ndef send_welcome' in after
    (moved,) = [o for o in result.outcomes if o.status is Status.REWRITTEN]
    assert moved.reason.startswith("held: ")
    assert "`profile.rebuild_badges`" in moved.reason and "receiver = '^profile$'" in moved.reason
    text = render("migrate/welcome", ["app.send_welcome"], result, inventory)
    assert "## Jobs moved before their verdict was decided: held inline" in text


@pytest.mark.parametrize(
    ("key", "keys_py", "message"),
    [
        ("app.keys:welcome", None, "no module app.keys in the project"),
        ("app.keys:welcome", "def other(user_id):\n    pass\n", "defines no function welcome"),
        (
            "app.keys:welcome",
            "def welcome(uid):\n    pass\n",
            "parameter 1 is uid, the job's is user_id",
        ),
        ("app.keys:welcome", "def welcome(user_id, salt):\n    pass\n", "it requires salt"),
        ("app.send_welcome", None, "has no field: every call would share it"),
    ],
)
def test_a_key_that_does_not_fit_the_job_is_refused_in_one_line(
    project: Path, key: str, keys_py: str | None, message: str
) -> None:
    if keys_py is not None:
        (project / "app").mkdir()
        (project / "app" / "keys.py").write_text(keys_py)
    options = ApplyOptions(jobs=("app.send_welcome",), keys={"app.send_welcome": key})
    with pytest.raises(KeyDoesNotFit) as info:
        plan_apply(project, inventory_of(project), options)
    assert message in str(info.value) and "\n" not in str(info.value)
    code, out = run(str(project), "--job", "app.send_welcome", "--key", f"app.send_welcome={key}")
    assert code != 0 and message in out


def test_the_digest_key_is_written_as_digest_key_of_the_job_and_its_arguments(
    project: Path,
) -> None:
    options = ApplyOptions(jobs=("app.refund",), keys={"app.refund": "app.refund:{*}"})
    (project / "MIGRATION_PLAN.md").write_text(SIGNED)
    options = options.model_copy(update={"signoffs": {"app.refund": "Ana Lopes, 2026-11-29"}})
    [change] = plan_apply(project, inventory_of(project), options).changes
    assert (
        '    refund.enqueue(order.id, order.total, idempotency_key=f"app.refund:'
        '{digest_key(refund, order.id, order.total)}")\n' in change.after
    )
    assert "from queue_runtime.keys import digest_key\n" in change.after


def test_the_per_call_key_is_written_as_a_fresh_uuid_made_at_the_call(project: Path) -> None:
    """``{+}`` (a notification's default, issue 22): one key per call, never over the arguments."""
    options = ApplyOptions(jobs=("app.refund",), keys={"app.refund": "app.refund:{+}"})
    (project / "MIGRATION_PLAN.md").write_text(SIGNED)
    options = options.model_copy(update={"signoffs": {"app.refund": "Ana Lopes, 2026-11-29"}})
    [change] = plan_apply(project, inventory_of(project), options).changes
    assert (
        '    refund.enqueue(order.id, order.total, idempotency_key=f"app.refund:{uuid4().hex}")\n'
        in change.after
    )
    assert "from uuid import uuid4\n" in change.after
    compile(change.after, "views.py", "exec")


@pytest.mark.parametrize(
    ("welcome", "refund"),
    [
        ("{user_id}", "{order_id}"),  # the same text around the fields: 42 and 42
        ("w-{user_id}", "w-{order_id}"),
    ],
)
def test_two_jobs_whose_keys_can_be_equal_are_refused_before_anything_is_written(
    project: Path, welcome: str, refund: str
) -> None:
    """Two jobs keyed ``{user_id}`` and ``{order_id}``: user 42 and order 42 take one key,
    and the runtime refuses a key taken by another job's call (KeyReused, raised at the
    enqueue, in that call's request). apply says so, once, and writes nothing."""
    declare(project, "app.refund", refund)  # declared earlier, in the app's pyproject.toml
    options = ApplyOptions(jobs=("app.send_welcome",), keys={"app.send_welcome": welcome})
    with pytest.raises(KeyDoesNotFit) as info:
        plan_apply(project, inventory_of(project), options)
    message = str(info.value)
    assert "app.refund" in message and "app.send_welcome" in message and "\n" not in message
    assert "KeyReused" in message and "'refund:" in message
    code, out = run(
        str(project), "--job", "app.send_welcome", "--key", f"app.send_welcome={welcome}"
    )
    assert code != 0 and "can be the same key" in out
    assert (project / "app.py").read_text() == APP


@pytest.mark.parametrize(
    "refund",
    ["refund:{order_id}", "{*}", "app.refund:{+}", "app.keys:welcome"],
)
def test_keys_that_cannot_meet_another_jobs_are_accepted(project: Path, refund: str) -> None:
    """Text of its own, a digest (over the job's name too), a key made per call, or a key
    function: none can be the other job's key."""
    (project / "app").mkdir()
    (project / "app" / "keys.py").write_text("def welcome(user_id):\n    return f'w{user_id}'\n")
    declare(project, "app.refund", refund)
    options = ApplyOptions(jobs=("app.send_welcome",), keys={"app.send_welcome": "{user_id}"})
    [change] = plan_apply(project, inventory_of(project), options).changes
    assert 'idempotency_key=f"{user.id}"' in change.after


def test_a_shared_key_of_two_jobs_neither_moving_now_does_not_block_another(
    project: Path,
) -> None:
    """Only keys of the jobs this run moves are compared: a clash between two others is
    theirs, reported when one of them moves."""
    declare(project, "app.refund", "{order_id}")
    declare(project, "app.other", "{order_id}")
    options = ApplyOptions(
        jobs=("app.send_welcome",), keys={"app.send_welcome": "welcome:{user_id}"}
    )
    assert plan_apply(project, inventory_of(project), options).changes
