"""A nested function handed to a spawn is lifted to module level, its free variables passed.

The closure read its enclosing function's variables when it ran; the lifted
job gets them as arguments at the site. Each case that would change what the
job sees (a variable rebound after the site or in a loop around it, a
``nonlocal`` write, the method's ``self``) stays with that reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory.models import Pattern
from tests.unit.codemods.conftest import build_inventory

Files = Callable[[dict[str, str]], Path]
VIEWS = """import asyncio
import threading

from django.db import transaction


def notify(user_id, text):
    return (user_id, text)


def save(pk: int):
    def inner():
        notify(pk, "saved")

    transaction.on_commit(inner)


def spawn(user_id: int):
    text = "hi"

    def send():
        notify(user_id, text)

    threading.Thread(target=send).start()


async def later(user_id: int):
    async def ping(times):
        for _ in range(times):
            notify(user_id, "x")

    asyncio.create_task(ping(3))


def twice(pk):
    def again():
        notify(pk, "x")

    transaction.on_commit(again)
    again()


def rebinding(user_id: int):
    def late():
        notify(user_id, "x")

    transaction.on_commit(late)
    user_id = 0


def looping(ids):
    user_id = None

    def each():
        notify(user_id, "x")

    for user_id in ids:
        transaction.on_commit(each)


async def closing(sid):
    async def clear(_sid):
        notify(_sid, "x")

    async def clear_later(_sid):
        await clear(_sid)

    asyncio.create_task(clear_later(sid))


class View:
    def post(self, pk):
        def mine():
            notify(self.user, pk)

        transaction.on_commit(mine)


def counting(pk):
    n = 0

    def bump():
        nonlocal n
        n += 1

    transaction.on_commit(bump)
"""


def _plan(root: Path, fragment: str, pattern: Pattern, job: str) -> tuple[Status, str, str]:
    written = fragment.split("(")[-1].rstrip(")").removeprefix("target=")
    inventory = build_inventory(root, [("app/views.py", fragment, pattern, job, written)])
    result = plan_apply(root, inventory, scanner=None)
    [outcome] = result.outcomes
    after = {c.path: c.after for c in result.changes}.get("app/views.py", "")
    if after:
        compile(after, "views.py", "exec")  # a lifted function never leaves the module unparsable
    return outcome.status, outcome.reason, after


def _app(write_files: Files) -> Path:
    return write_files({"app/__init__.py": "", "app/views.py": VIEWS})


def test_an_on_commit_closure_is_lifted_with_what_it_reads_passed_at_commit(
    write_files: Files,
) -> None:
    root = _app(write_files)

    status, reason, after = _plan(
        root, "on_commit(inner)", Pattern.ON_COMMIT, "app.views.save.<locals>.inner"
    )

    assert status is Status.REWRITTEN, reason
    assert (
        "def save(pk: int):\n    transaction.on_commit(lambda: _save_inner.enqueue(pk=pk))\n"
        in after
    )
    assert (
        '@job(pool="batch", idempotent=True)\ndef _save_inner(pk):\n    notify(pk, "saved")\n'
        in after
    )
    assert "def inner" not in after


def test_a_thread_target_and_a_task_coroutine_are_lifted_too(write_files: Files) -> None:
    root = _app(write_files)

    status, reason, after = _plan(
        root, "Thread(target=send)", Pattern.THREAD, "app.views.spawn.<locals>.send"
    )
    assert status is Status.REWRITTEN, reason
    assert (
        "_spawn_send.options(inline=InlineShape.THREAD).enqueue(user_id=user_id, text=text)"
        in after
    )
    assert "def _spawn_send(user_id, text):\n    notify(user_id, text)\n" in after

    status, reason, after = _plan(
        root, "create_task(ping(3))", Pattern.ASYNCIO_TASK, "app.views.later.<locals>.ping"
    )
    assert status is Status.REWRITTEN, reason
    assert "_later_ping.options(inline=InlineShape.TASK).enqueue(3, user_id=user_id)" in after
    assert "async def _later_ping(times, user_id):\n    for _ in range(times):\n" in after


def test_a_closure_the_function_also_calls_stays_and_calls_the_lifted_one(
    write_files: Files,
) -> None:
    root = _app(write_files)

    status, reason, after = _plan(
        root, "on_commit(again)", Pattern.ON_COMMIT, "app.views.twice.<locals>.again"
    )

    assert status is Status.REWRITTEN, reason
    assert "    def again():\n        return _twice_again(pk=pk)\n" in after
    assert "transaction.on_commit(lambda: _twice_again.enqueue(pk=pk))\n    again()\n" in after


def test_a_closure_whose_lift_would_change_what_it_sees_stays_with_the_reason(
    write_files: Files,
) -> None:
    root = _app(write_files)
    cases = {
        ("on_commit(late)", "rebinding.<locals>.late"): "`user_id` is rebound after the site",
        ("on_commit(each)", "looping.<locals>.each"): "`user_id` changes in the loop around",
        ("on_commit(mine)", "View.post.<locals>.mine"): "it reads `self` of the enclosing method",
        ("on_commit(bump)", "counting.<locals>.bump"): "it rebinds n of an outer scope (nonlocal)",
    }
    status, reason, after = _plan(
        root,
        "create_task(clear_later(sid))",
        Pattern.ASYNCIO_TASK,
        "app.views.closing.<locals>.clear_later",
    )
    assert status is Status.SKIPPED and after == ""
    assert "it uses `clear`, a function or class defined in the enclosing function" in reason
    for (fragment, job), why in cases.items():
        status, reason, after = _plan(root, fragment, Pattern.ON_COMMIT, f"app.views.{job}")

        assert status is Status.SKIPPED and after == "", job
        assert reason.startswith("nested function ") and why in reason, reason
        assert "move it to module level yourself" in reason


def test_a_free_variable_named_like_a_builtin_is_passed_not_dropped(write_files: Files) -> None:
    views = (
        "from django.db import transaction\n\n\n"
        "def save(id, type):\n"
        "    def inner():\n"
        "        print(id, type, len(type))\n\n"
        "    transaction.on_commit(inner)\n"
    )
    root = write_files({"app/__init__.py": "", "app/views.py": views})

    status, reason, after = _plan(
        root, "on_commit(inner)", Pattern.ON_COMMIT, "app.views.save.<locals>.inner"
    )

    assert status is Status.REWRITTEN, reason
    assert "on_commit(lambda: _save_inner.enqueue(id=id, type=type))" in after
    assert "def _save_inner(id, type):\n    print(id, type, len(type))\n" in after


BLOCKS = """import asyncio
import threading

from django.db import transaction


def notify(user_id, text):
    return (user_id, text)


async def leave(sid, now: bool):
    if now:
        notify(sid, "now")
    else:

        async def clear_later(_sid):
            await asyncio.sleep(5)
            notify(_sid, "later")

        asyncio.ensure_future(clear_later(sid))


def saved(pk, lock):
    with lock as held:
        text = "saved"

        def inner():
            notify(pk, text, held)

        transaction.on_commit(inner)


def after_the_if(pk, ok):
    if ok:

        def maybe():
            notify(pk, "x")

    transaction.on_commit(maybe)


def each(ids):
    for pk in ids:

        def one():
            notify(0, "x")

        transaction.on_commit(one)


def two_ways(pk, fast):
    if fast:

        def send():
            notify(pk, "fast")

    else:

        def send():
            notify(pk, "slow")

    threading.Thread(target=send).start()


def branch_bound(pk, ok):
    if ok:
        text = "ok"
    if pk:

        def told():
            notify(pk, text)

        transaction.on_commit(told)
"""


def _plan_blocks(root: Path, fragment: str, pattern: Pattern, job: str) -> tuple[Status, str, str]:
    (root / "app" / "views.py").write_text(BLOCKS)
    return _plan(root, fragment, pattern, f"app.views.{job}")


def test_a_closure_defined_in_a_block_that_also_holds_the_site_is_lifted(
    write_files: Files,
) -> None:
    """A def in an ``else:`` or ``with`` block is bound when its statement runs, as one in the
    function's body: the site after it in that block always sees it."""
    root = _app(write_files)

    status, reason, after = _plan_blocks(
        root,
        "ensure_future(clear_later(sid))",
        Pattern.ASYNCIO_TASK,
        "leave.<locals>.clear_later",
    )
    assert status is Status.REWRITTEN, reason
    assert (
        "    else:\n        _leave_clear_later.options(inline=InlineShape.TASK).enqueue(sid)\n"
        in (after)
    )
    assert "async def _leave_clear_later(_sid):\n    await asyncio.sleep(5)\n" in after
    assert "async def clear_later" not in after

    status, reason, after = _plan_blocks(
        root, "on_commit(inner)", Pattern.ON_COMMIT, "saved.<locals>.inner"
    )
    assert status is Status.REWRITTEN, reason
    assert (
        "transaction.on_commit(lambda: _saved_inner.enqueue(pk=pk, text=text, held=held))" in after
    )


def test_a_closure_in_a_block_stays_when_it_may_be_unbound_or_rebound_at_the_site(
    write_files: Files,
) -> None:
    root = _app(write_files)
    cases = {
        ("on_commit(maybe)", "after_the_if.<locals>.maybe"): (
            "it is defined in the block of the statement at line 34, which does not also hold "
            "the site"
        ),
        ("on_commit(one)", "each.<locals>.one"): "it is defined inside a loop",
        ("Thread(target=send)", "two_ways.<locals>.send"): "defines send 2 times",
        ("on_commit(told)", "branch_bound.<locals>.told"): (
            "`text` is not bound on every way to the site (only inside a block)"
        ),
    }
    for (fragment, job), why in cases.items():
        pattern = Pattern.THREAD if "Thread" in fragment else Pattern.ON_COMMIT
        status, reason, after = _plan_blocks(root, fragment, pattern, job)

        assert status is Status.SKIPPED and after == "", job
        assert why in reason, reason
