"""A library callable handed to a spawn moves through a wrapper job written beside the site.

``on_commit(partial(default_storage.delete, name))`` enqueues
``_delete_from_default_storage``, a module-level job of the site's module that
calls the library on the worker; a callable a worker could not reach the same
way (a local object, an import inside the function) keeps the scan's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory.models import Argument, Idempotency, Pattern
from tests.unit.codemods.conftest import build_inventory

Files = Callable[[dict[str, str]], Path]
JOB = "django.core.files.storage.default_storage.delete"
SCAN_REASON = f"{JOB}: no project function to move: wrap it in one"
VIEWS = """from functools import partial

from django.core.files.storage import default_storage
from django.db import transaction


def drop(name):
    transaction.on_commit(partial(default_storage.delete, name))


def drop_twice(name, other):
    transaction.on_commit(lambda: default_storage.delete(name))
    transaction.on_commit(partial(default_storage.delete, other))


def drop_local(name):
    from django.core.files.storage import default_storage

    transaction.on_commit(partial(default_storage.delete, name))


def drop_from(storage, name):
    transaction.on_commit(partial(storage.delete, name))


def drop_now(name):
    default_storage.delete(name)
"""


def _plan(
    root: Path,
    fragments: list[str],
    pattern: Pattern = Pattern.ON_COMMIT,
    verdict: Idempotency = Idempotency.IDEMPOTENT,
    job: str = JOB,
) -> tuple[list[tuple[Status, str]], dict[str, str]]:
    sites = [("app/views.py", f, pattern, job, f.split("(", 1)[1][:-1]) for f in fragments]
    inventory = build_inventory(root, sites, {job: verdict}, unresolved_reason=SCAN_REASON)
    for site in inventory.sites:
        name = "other" if "other" in site.target_source else "name"
        site.arguments = [Argument(name="#0", source=name, serialisable=None)]
    result = plan_apply(root, inventory, scanner=None)
    outcomes = sorted(result.outcomes, key=lambda o: o.site.location.line)
    return [(o.status, o.reason) for o in outcomes], {c.path: c.after for c in result.changes}


def _app(write_files: Files) -> Path:
    return write_files({"app/__init__.py": "", "app/views.py": VIEWS})


def test_a_library_callable_on_commit_moves_through_a_wrapper_in_the_site_module(
    write_files: Files,
) -> None:
    root = _app(write_files)

    [(status, reason)], after = _plan(root, ["on_commit(partial(default_storage.delete, name))"])

    assert status is Status.REWRITTEN, reason
    views = after["app/views.py"]
    assert "transaction.on_commit(partial(_delete_from_default_storage.enqueue, name))" in views
    assert '@job(pool="batch", idempotent=True)\ndef _delete_from_default_storage(name):\n' in views
    assert "    return default_storage.delete(name)\n" in views
    # the import the wrapper calls through stays; the module still parses
    assert "from django.core.files.storage import default_storage\n" in views
    compile(views, "views.py", "exec")


def test_two_sites_of_one_callable_share_one_wrapper(write_files: Files) -> None:
    root = _app(write_files)

    outcomes, after = _plan(
        root,
        [
            "on_commit(lambda: default_storage.delete(name))",
            "on_commit(partial(default_storage.delete, other))",
        ],
    )

    assert [s for s, _ in outcomes] == [Status.REWRITTEN, Status.REWRITTEN], outcomes
    views = after["app/views.py"]
    assert "on_commit(lambda: _delete_from_default_storage.enqueue(name))" in views
    assert "on_commit(partial(_delete_from_default_storage_2.enqueue, other))" in views
    assert views.count("def _delete_from_default_storage(name):") == 1
    assert views.count("def _delete_from_default_storage_2(other):") == 1
    compile(views, "views.py", "exec")


def test_a_callable_a_worker_cannot_reach_the_same_way_keeps_the_scan_reason(
    write_files: Files,
) -> None:
    root = _app(write_files)
    views = VIEWS.replace(
        "def drop(name):\n    transaction.on_commit(partial(default_storage.delete, name))\n", ""
    )
    (root / "app/views.py").write_text(views)

    # imported inside the function, then a parameter: neither is bound by the module
    for fragment, written in [
        ("    transaction.on_commit(partial(default_storage.delete, name))", "default_storage"),
        ("on_commit(partial(storage.delete, name))", "storage"),
    ]:
        [(status, reason)], after = _plan(root, [fragment])
        assert status is Status.SKIPPED and after == {}, fragment
        assert reason.startswith(SCAN_REASON), reason
        assert f"`{written}.delete` is not bound by a module-level import" in reason


def test_a_direct_call_or_a_refused_verdict_keeps_the_library_call_where_it_is(
    write_files: Files,
) -> None:
    root = _app(write_files)

    [(status, reason)], after = _plan(
        root, ["    default_storage.delete(name)"], Pattern.DIRECT_CALL
    )
    assert (status, reason, after) == (Status.SKIPPED, SCAN_REASON, {})

    [(status, reason)], after = _plan(
        root, ["on_commit(partial(default_storage.delete, name))"], verdict=Idempotency.UNKNOWN
    )
    assert status is Status.SKIPPED and after == {}
    assert "idempotency is unknown" in reason
