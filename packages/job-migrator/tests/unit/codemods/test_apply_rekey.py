"""A moved site whose job's verdict later needs a key gets the key from the next apply.

The story (issue 21): a job the scan could not decide is moved *held* (``--job``,
``@job(idempotency="unknown")``); a later scan decides it ``non_idempotent``. Its sites
already enqueue, without a key. Each step here is the real scanner over a small project,
then apply as ``migrator apply`` runs it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import ApplyOptions, SiteOutcome, Status, plan_apply
from inventory import scan
from inventory.models import Idempotency, Inventory, Pattern

HELD = """\
import smtplib

from queue_runtime import InlineShape, job


@job(pool="batch", idempotency="unknown")
def send_welcome(user_id):
    smtplib.SMTP("localhost").sendmail("a@example.com", [f"{user_id}@example.com"], "hi")


@job(pool="batch")
def warm(product_id):
    CACHE[product_id] = product_id


def signup(user):
    send_welcome.enqueue(user.id)


def resend(user):
    send_welcome.options(inline=InlineShape.THREAD).enqueue(user_id=user.id)


def resend_all(users):
    send_welcome.enqueue_many([((u.id,), {}) for u in users])


def update(product):
    warm.enqueue(product.id)


CACHE = {}
"""
JOB = "app.send_welcome"
KEY = "welcome:{user_id}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(HELD)
    return tmp_path


def scanned(root: Path) -> Inventory:
    return scan(root, use_cache=False, write=False, jobs=1)


def outcomes(root: Path, options: ApplyOptions) -> tuple[dict[str, SiteOutcome], str]:
    """Each site's outcome by its enclosing function, and the file as apply would write it."""
    inventory = scanned(root)
    result = plan_apply(root, inventory, options)
    after = result.changes[0].after if result.changes else (root / "app.py").read_text()
    ast.parse(after)  # a codemod never writes code that does not parse
    by_caller = {o.site.enclosing_function.rsplit(".", 1)[-1]: o for o in result.outcomes}
    return by_caller, after


def test_the_scan_decides_the_held_job_non_idempotent_and_sees_its_moved_sites(
    project: Path,
) -> None:
    inventory = scanned(project)
    (job,) = [j for j in inventory.jobs if j.qualname == JOB]
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    patterns = {s.enclosing_function: s.pattern for s in inventory.sites if s.job == JOB}
    assert set(patterns.values()) == {Pattern.ENQUEUE}
    assert len(patterns) == 3


def test_by_default_the_sites_stay_and_say_how_to_get_their_key(project: Path) -> None:
    found, after = outcomes(project, ApplyOptions())
    assert after == HELD
    for caller in ("signup", "resend"):
        assert found[caller].status is Status.ALREADY
        why = found[caller].reason
        assert "passes no idempotency_key" in why and f"--key {JOB}=TEMPLATE" in why
        assert f"migrator apply --job {JOB}" in why


def test_named_with_its_key_each_enqueue_gets_the_key_from_its_own_arguments(
    project: Path,
) -> None:
    found, after = outcomes(project, ApplyOptions(jobs=(JOB,), keys={JOB: KEY}))
    assert '    send_welcome.enqueue(user.id, idempotency_key=f"welcome:{user.id}")\n' in after
    # Options already bound: the key joins them (``.enqueue`` takes the job's arguments).
    assert (
        "send_welcome.options(inline=InlineShape.THREAD, "
        'idempotency_key=f"welcome:{user.id}").enqueue(user_id=user.id)'
    ) in after
    for caller in ("signup", "resend"):
        assert found[caller].status is Status.REWRITTEN
        assert found[caller].reason.startswith(f"key added: `{JOB}` is non_idempotent now")
    # enqueue_many takes one key per call: left, with what to write.
    assert found["resend_all"].status is Status.ALREADY
    assert "idempotency_keys=" in found["resend_all"].reason
    # The decorator is the one the first apply wrote: the gate still holds the job.
    assert '@job(pool="batch", idempotency="unknown")\ndef send_welcome' in after
    assert after.count("@job(") == 2


def test_a_second_apply_leaves_a_keyed_enqueue_as_written(project: Path) -> None:
    _, after = outcomes(project, ApplyOptions(jobs=(JOB,), keys={JOB: KEY}))
    (project / "app.py").write_text(after)
    found, again = outcomes(project, ApplyOptions(jobs=(JOB,), keys={JOB: "other:{user_id}"}))
    assert again == after
    assert found["signup"].status is Status.ALREADY
    assert "already passes idempotency_key" in found["signup"].reason


@pytest.mark.parametrize(
    "options",
    [
        ApplyOptions(keys={JOB: KEY}),  # the key declared, the non-idempotent job not named
        ApplyOptions(jobs=(JOB,)),  # named, no key
        ApplyOptions(jobs=("app.warm",), keys={JOB: KEY}),  # another job named
        ApplyOptions(hold_unknown=True, keys={JOB: KEY}),  # the other mode: it is decided now
    ],
    ids=["key-not-named", "named-no-key", "other-job-named", "hold-unknown"],
)
def test_without_both_the_job_named_and_its_key_nothing_is_written(
    project: Path, options: ApplyOptions
) -> None:
    found, after = outcomes(project, options)
    assert after == HELD
    assert found  # apply looked (at the named job's sites only, when one is named)
    assert all(o.status is not Status.REWRITTEN for o in found.values())


def test_an_idempotent_jobs_moved_site_takes_no_key(project: Path) -> None:
    found, after = outcomes(project, ApplyOptions(jobs=("app.warm",), keys={"app.warm": "w:{*}"}))
    assert "    warm.enqueue(product.id)\n" in after
    assert found["update"].status is Status.ALREADY
    assert found["update"].reason == "enqueues a queue_runtime @job"


def test_a_job_with_a_parameter_named_idempotency_key_takes_the_key_through_options(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(
        HELD.replace("def send_welcome(user_id):", "def send_welcome(user_id, idempotency_key):")
        .replace("send_welcome.enqueue(user.id)", "send_welcome.enqueue(user.id, 'k')")
        .replace("user_id=user.id)", "user_id=user.id, idempotency_key='k')")
    )
    _, after = outcomes(tmp_path, ApplyOptions(jobs=(JOB,), keys={JOB: KEY}))
    assert (
        "send_welcome.options(idempotency_key=f\"welcome:{user.id}\").enqueue(user.id, 'k')"
    ) in after


def test_a_moved_needs_key_job_gets_its_declared_key_without_naming_it(
    tmp_path: Path, build_inventory: Callable[..., Inventory]
) -> None:
    """``needs_key`` with a declared key moves by default; so its moved sites take the key."""
    (tmp_path / "app.py").write_text(
        "from queue_runtime import job\n\n\n@job(pool='batch')\ndef touch(user_id):\n"
        "    return user_id\n\n\ndef view(user):\n    touch.enqueue(user.id)\n"
    )
    sites = [("app.py", "touch.enqueue(", Pattern.ENQUEUE, "app.touch", "touch")]
    inventory = build_inventory(tmp_path, sites, {"app.touch": Idempotency.NEEDS_KEY})
    result = plan_apply(tmp_path, inventory, ApplyOptions(keys={"app.touch": "touch:{user_id}"}))
    (change,) = result.changes
    assert 'touch.enqueue(user.id, idempotency_key=f"touch:{user.id}")' in change.after


def test_a_django_tasks_enqueue_is_never_given_a_key(
    tmp_path: Path, build_inventory: Callable[..., Inventory]
) -> None:
    """Django's ``task.enqueue()`` takes no queue options: a key there would raise. (The
    scan reports a Django task's enqueue inside ``on_commit`` today; this holds the rule
    for an inventory that reports it as a moved site.)"""
    (tmp_path / "app.py").write_text(
        "from django.tasks import task\n\n\n@task()\ndef touch(user_id):\n"
        "    return user_id\n\n\ndef view(user):\n    touch.enqueue(user.id)\n"
    )
    sites = [("app.py", "touch.enqueue(", Pattern.ENQUEUE, "app.touch", "touch")]
    inventory = build_inventory(tmp_path, sites, {"app.touch": Idempotency.NON_IDEMPOTENT})
    jobs = [j.model_copy(update={"django_task": True}) for j in inventory.jobs]
    inventory = inventory.model_copy(update={"jobs": jobs})
    options = ApplyOptions(jobs=("app.touch",), keys={"app.touch": "touch:{user_id}"})
    result = plan_apply(tmp_path, inventory, options)
    assert not result.changes
    assert [o.status for o in result.outcomes] == [Status.ALREADY]
