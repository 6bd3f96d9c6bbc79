"""Tricky shapes across files: formatting kept byte for byte, stale positions, unparsable output."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest

from codemods import ApplyOptions, CodemodError, Status, _rewriter, plan_apply, write
from codemods._types import Block, Edit, Skip, Target
from inventory.models import Idempotency, Inventory, Pattern

Build = Callable[..., Inventory]

TASKS = '''"""Jobs."""


def resize(path, width=800):
    return path


def notify(user_id):
    return user_id
'''

VIEWS = """import threading
from functools import partial

import tasks
from tasks import notify as ping


def upload(path,user_id):   # odd spacing stays odd
    tasks.resize(path,
                 width=400)  # trailing comment
    threading.Thread(target=partial(tasks.resize, path), args=(200,)).start()
    x  =  1 ;  y = 2
    ping(user_id)
    return x + y
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


@pytest.fixture
def project(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files({"tasks.py": TASKS, "views.py": VIEWS})


def _sites() -> list[tuple[str, ...]]:
    return [
        ("views.py", "tasks.resize(path,", Pattern.DIRECT_CALL, "tasks.resize"),
        ("views.py", "threading.Thread", Pattern.THREAD, "tasks.resize"),
        ("views.py", "ping(user_id)", Pattern.DIRECT_CALL, "tasks.notify", "ping"),
    ]


def test_only_the_rewritten_expressions_change(project: Path, build_inventory: Build) -> None:
    inventory = build_inventory(project, _sites(), {"tasks.notify": Idempotency.NON_IDEMPOTENT})

    result = plan_apply(project, inventory, scanner=None)

    views = next(c for c in result.changes if c.path == "views.py")
    assert changed_lines(views.before, views.after) == [
        "-import threading",  # the rewrite took their last use: no unused import is left behind
        "-from functools import partial",
        # the new third-party section takes their place, at the top of the file (no blank
        # line before it), set off from the project's imports by the blank line that was there
        "+from queue_runtime import InlineShape",  # the thread site keeps its inline shape
        "-    tasks.resize(path,",
        "+    tasks.resize.enqueue(path,",
        "-    threading.Thread(target=partial(tasks.resize, path), args=(200,)).start()",
        "+    tasks.resize.options(inline=InlineShape.THREAD).enqueue(path, 200)",
    ]
    assert [o.status for o in result.outcomes] == [
        Status.REWRITTEN,
        Status.REWRITTEN,
        Status.SKIPPED,
    ]
    assert "non_idempotent" in result.outcomes[2].reason


def test_the_job_is_registered_once_where_it_is_defined(
    project: Path, build_inventory: Build
) -> None:
    inventory = build_inventory(project, _sites())

    result = plan_apply(project, inventory, scanner=None)

    tasks = next(c for c in result.changes if c.path == "tasks.py")
    assert tasks.after.count('@job(pool="batch", idempotent=True)') == 2
    assert tasks.after.count("from queue_runtime import job") == 1
    assert result.jobs == ["tasks.notify", "tasks.resize"]  # fewer sites first: smaller risk


def test_pool_comes_from_the_runtime_configuration(project: Path, build_inventory: Build) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.queue_runtime]\ndefault_pool = "low"\n[tool.queue_runtime.jobs."tasks.notify"]\npool = "transactional"\n'
    )
    inventory = build_inventory(project, _sites())

    tasks = next(
        c for c in plan_apply(project, inventory, scanner=None).changes if c.path == "tasks.py"
    )

    assert '@job(pool="low", idempotent=True)\ndef resize' in tasks.after
    assert '@job(pool="transactional", idempotent=True)\ndef notify' in tasks.after


def test_crlf_files_keep_their_line_endings(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    root = write_files(
        {"app.py": "def resize(p):\r\n    return p\r\n\r\n\r\ndef view(p):\r\n    resize(p)\r\n"}
    )
    inventory = build_inventory(
        root, [("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize")]
    )

    [change] = plan_apply(root, inventory, scanner=None).changes

    assert change.after == (
        'from queue_runtime import job\r\n\r\n\r\n@job(pool="batch", idempotent=True)\r\ndef resize(p):\r\n    return p\r\n'
        "\r\n\r\ndef view(p):\r\n    resize.enqueue(p)\r\n"
    )


def test_a_site_whose_line_holds_other_code_is_never_rewritten(
    project: Path, build_inventory: Build
) -> None:
    inventory = build_inventory(
        project, [("views.py", "x  =  1", Pattern.DIRECT_CALL, "tasks.resize")]
    )

    result = plan_apply(project, inventory, scanner=None)

    assert result.changes == []
    [outcome] = result.outcomes
    assert (
        outcome.status is Status.SKIPPED and "not found at the recorded position" in outcome.reason
    )


def test_unserialisable_argument_moves_with_the_note(
    project: Path, build_inventory: Build, unserialisable: Callable[[str, str], list[object]]
) -> None:
    site = [("views.py", "ping(user_id)", Pattern.DIRECT_CALL, "tasks.notify", "ping")]
    inventory = build_inventory(
        project, site, arguments=unserialisable("user_id", "an open socket")
    )

    [outcome] = plan_apply(project, inventory, scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN
    assert outcome.arguments_note() == (
        "user_id: checked at run time: never storable as written (an open socket): every "
        "call falls back to running in-process"
    )


def test_result_used_is_manual_with_the_consuming_lines(
    project: Path, build_inventory: Build
) -> None:
    site = [("views.py", "ping(user_id)", Pattern.DIRECT_CALL, "tasks.notify", "ping")]
    inventory = build_inventory(project, site, result_used=True, result_use_lines=[14])

    result = plan_apply(project, inventory, scanner=None)

    assert result.changes == []
    assert [(o.status, o.lines) for o in result.outcomes] == [(Status.MANUAL, [14])]


def test_only_the_requested_jobs(project: Path, build_inventory: Build) -> None:
    inventory = build_inventory(project, _sites())

    result = plan_apply(project, inventory, ApplyOptions(jobs=("tasks.notify",)), scanner=None)

    assert [o.site.job for o in result.outcomes] == ["tasks.notify"]
    assert "resize.enqueue" not in result.diff


def test_key_template_without_a_matching_argument_is_skipped(
    project: Path, build_inventory: Build
) -> None:
    site = [("views.py", "ping(user_id)", Pattern.DIRECT_CALL, "tasks.notify", "ping")]
    inventory = build_inventory(project, site, {"tasks.notify": Idempotency.NEEDS_KEY})

    result = plan_apply(
        project, inventory, ApplyOptions(keys={"tasks.notify": "n-{order_id}"}), scanner=None
    )

    assert [o.reason for o in result.outcomes] == [
        "idempotency key template 'n-{order_id}': no argument for order_id"
    ]
    assert result.changes == []


def test_a_module_that_binds_job_gets_the_qualified_decorator(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    root = write_files(
        {
            "app.py": "job = 'nightly'\n\n\ndef resize(p):\n    return p\n\n\ndef view(p):\n    resize(p)\n"
        }
    )
    inventory = build_inventory(
        root, [("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize")]
    )

    [change] = plan_apply(root, inventory, scanner=None).changes

    assert change.after.startswith("import queue_runtime\n\njob = 'nightly'")
    assert '@queue_runtime.job(pool="batch", idempotent=True)\ndef resize' in change.after


def test_background_tasks_hands_the_enqueue_on_and_keeps_the_other_task(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    source = (
        "from fastapi import BackgroundTasks\n\n\ndef resize(p):\n    return p\n\n\n"
        "def view(p, tasks: BackgroundTasks):\n    tasks.add_task(resize, p)\n    tasks.add_task(print, p)\n"
    )
    root = write_files({"app.py": source})
    inventory = build_inventory(
        root, [("app.py", "add_task(resize", Pattern.BACKGROUND_TASKS, "app.resize")]
    )

    [change] = plan_apply(root, inventory, scanner=None).changes

    assert (
        "def view(p, tasks: BackgroundTasks):\n    tasks.add_task(resize.enqueue, p)\n    tasks.add_task(print, p)\n"
        in change.after
    )
    assert "from fastapi import BackgroundTasks" in change.after


def test_executor_map_over_several_iterables_zips_them(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    source = "def thumb(i, size):\n    return i\n\n\ndef view(pool, ids, sizes):\n    pool.map(thumb, ids, sizes)\n"
    root = write_files({"app.py": source})
    inventory = build_inventory(
        root, [("app.py", "pool.map", Pattern.EXECUTOR_SUBMIT, "app.thumb")]
    )

    [change] = plan_apply(root, inventory, scanner=None).changes

    assert change.after.endswith(
        "    for item_0, item_1 in zip(ids, sizes):\n"
        "        thumb.options(inline=InlineShape.EXECUTOR, executor=pool).enqueue(item_0, item_1)\n"
    )


def test_rewritten_code_that_would_not_compile_is_never_produced(
    project: Path, monkeypatch: pytest.MonkeyPatch, build_inventory: Build
) -> None:
    def broken(body: object, index: int, target: object) -> Edit:
        return Edit({index: [cst.parse_statement("return 1\n")]})  # 'return' outside function

    monkeypatch.setitem(_rewriter.REWRITERS, Pattern.DIRECT_CALL, broken)
    (project / "views.py").write_text(VIEWS + "\ntasks.resize('x')\n")
    inventory = build_inventory(
        project, [("views.py", "tasks.resize('x')", Pattern.DIRECT_CALL, "tasks.resize")]
    )

    result = plan_apply(project, inventory, scanner=None)

    assert result.changes == []
    assert "would not parse" in result.refused["views.py"]
    assert [o.status for o in result.outcomes] == [Status.SKIPPED]


def test_write_applies_the_plan_and_refuses_a_file_changed_meanwhile(
    project: Path, build_inventory: Build
) -> None:
    inventory = build_inventory(project, _sites())
    result = plan_apply(project, inventory, scanner=None)
    (project / "views.py").write_text(VIEWS + "# edited\n")

    with pytest.raises(CodemodError, match="changed since the plan"):
        write(result)
    assert (project / "tasks.py").read_text() == TASKS  # nothing written at all

    (project / "views.py").write_text(VIEWS)
    write(result)
    assert (project / "views.py").read_text() == next(
        c.after for c in result.changes if c.path == "views.py"
    )


def test_thread_object_used_outside_its_block_is_kept(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    source = (
        "from threading import Thread\n\n\ndef resize(p):\n    return p\n\n\n"
        "def view(p, lock):\n    with lock:\n        t = Thread(target=resize, args=(p,))\n        t.start()\n    t.join()\n"
    )
    root = write_files({"app.py": source})
    inventory = build_inventory(root, [("app.py", "t = Thread", Pattern.THREAD, "app.resize")])

    result = plan_apply(root, inventory, scanner=None)

    assert result.changes == []
    assert [o.reason for o in result.outcomes] == [
        "the thread object 't' is used after start(): rewrite by hand"
    ]


def test_executor_map_loop_variable_never_shadows_a_name_of_the_function(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    source = (
        "def thumb(i):\n    return i\n\n\n"
        "def view(pool, ids, item):\n    if ids:\n        pool.map(thumb, ids)\n    return item\n"
    )
    root = write_files({"app.py": source})
    inventory = build_inventory(
        root, [("app.py", "pool.map", Pattern.EXECUTOR_SUBMIT, "app.thumb")]
    )

    [change] = plan_apply(root, inventory, scanner=None).changes

    assert (
        "        for item_1 in ids:\n"
        "            thumb.options(inline=InlineShape.EXECUTOR, executor=pool).enqueue(item_1)\n"
        "    return item\n" in change.after
    )


def test_a_job_with_an_idempotency_key_parameter_gets_the_key_through_options(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    source = "def pay(order_id, idempotency_key=None):\n    return order_id\n\n\ndef view(o):\n    pay(o, 'x')\n"
    root = write_files({"app.py": source})
    sites = [("app.py", "    pay(o", Pattern.DIRECT_CALL, "app.pay")]
    inventory = build_inventory(root, sites, {"app.pay": Idempotency.NEEDS_KEY})

    [change] = plan_apply(
        root, inventory, ApplyOptions(keys={"app.pay": "pay-{order_id}"}), scanner=None
    ).changes

    assert change.after.endswith(
        """    pay.options(idempotency_key=f"pay-{o}").enqueue(o, 'x')\n"""
    )


def test_a_module_that_cannot_be_rewritten_holds_back_only_the_jobs_it_holds(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    """One job's bad module must not cancel another job's move in other files."""
    root = write_files(
        {
            "tasks.py": TASKS,
            "views.py": "import tasks\n\n\ndef upload(path):\n    tasks.resize(path)\n",
            "other.py": "import tasks\n\n\ndef ping(user_id):\n    tasks.notify(user_id)\n",
        }
    )
    inventory = build_inventory(
        root,
        [
            ("views.py", "tasks.resize(path)", Pattern.DIRECT_CALL, "tasks.resize"),
            ("other.py", "tasks.notify(user_id)", Pattern.DIRECT_CALL, "tasks.notify"),
        ],
    )

    def broken_in_other(body: Block, index: int, target: Target) -> Edit | Skip | None:
        if target.site.location.path == "other.py":
            return Edit({index: [cst.parse_statement("nonlocal unbound\n")]})  # compile refuses it
        return original(body, index, target)

    original = _rewriter.REWRITERS[Pattern.DIRECT_CALL]
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(_rewriter.REWRITERS, Pattern.DIRECT_CALL, broken_in_other)
        result = plan_apply(root, inventory, scanner=None)

    changed = {c.path for c in result.changes}
    assert "views.py" in changed and "other.py" not in changed
    by_job = {o.site.job: o for o in result.outcomes}
    assert by_job["tasks.resize"].status is Status.REWRITTEN
    assert by_job["tasks.notify"].status is Status.SKIPPED
    assert (
        "other.py" in by_job["tasks.notify"].reason
        and "would not parse" in by_job["tasks.notify"].reason
    )
    assert "would not parse" in result.refused["other.py"]


def test_a_module_this_python_cannot_compile_is_left_alone_with_the_reason(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    """A module in newer syntax than the running Python (``type X = ...`` under 3.11) cannot be
    checked after the rewrite, so its jobs stay; the reason says which Python to run."""
    newer = "type Alias = int\n"
    try:
        compile(newer, "probe", "exec")
    except SyntaxError:
        pass
    else:  # this Python compiles it: a module it cannot compile that libcst still parses
        newer = "nonlocal unbound\n"
    root = write_files(
        {
            "tasks.py": TASKS,
            "views.py": "import tasks\n"
            + newer
            + "\n\ndef upload(path):\n    tasks.resize(path)\n",
            "other.py": "import tasks\n\n\ndef ping(user_id):\n    tasks.notify(user_id)\n",
        }
    )
    inventory = build_inventory(
        root,
        [
            ("views.py", "tasks.resize(path)", Pattern.DIRECT_CALL, "tasks.resize"),
            ("other.py", "tasks.notify(user_id)", Pattern.DIRECT_CALL, "tasks.notify"),
        ],
    )

    result = plan_apply(root, inventory, scanner=None)

    assert {c.path for c in result.changes} == {"other.py", "tasks.py"}
    by_job = {o.site.job: o for o in result.outcomes}
    assert by_job["tasks.notify"].status is Status.REWRITTEN
    assert by_job["tasks.resize"].status is Status.SKIPPED
    assert "run migrator with the project's Python" in by_job["tasks.resize"].reason
