"""Every kind of refusal names the missing fact and one change; making that change moves the site.

Each test builds a small reproduction, checks the refusal, applies the change
the reason names (in the code, or in the options it names) and checks that the
site then moves. Two reasons that used to be wrong are checked here too: a
value declared with ``t.cast(Model, ...)`` and an annotated ``uid: int = 5``
are facts, not refusals.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import ApplyOptions, Crossing, SiteOutcome, Status, plan_apply
from inventory.models import Argument, Idempotency, Pattern
from tests.unit.codemods.conftest import build_inventory

Files = Callable[[dict[str, str]], Path]
MODELS = """from django.db import models


class User(models.Model):
    email = models.EmailField()
"""


def _outcome(
    root: Path,
    fragment: str,
    job: str,
    pattern: Pattern = Pattern.DIRECT_CALL,
    options: ApplyOptions | None = None,
    verdict: Idempotency = Idempotency.IDEMPOTENT,
    **fields: object,
) -> SiteOutcome:
    site = ("app/views.py", fragment, pattern, job)
    inventory = build_inventory(root, [site], {job: verdict}, **fields)
    result = plan_apply(root, inventory, options or ApplyOptions(), scanner=None)
    [outcome] = result.outcomes
    return outcome


def _app(write_files: Files, views: str) -> Path:
    return write_files({"app/__init__.py": "", "app/models.py": MODELS, "app/views.py": views})


def test_a_nested_job_moves_once_it_is_at_module_level(write_files: Files) -> None:
    nested = "def view(uid: int):\n    def send(uid):\n        ...\n\n    send(uid)\n"
    root = _app(write_files, nested)

    refused = _outcome(root, "    send(uid)", "app.views.view.send")

    assert refused.status is Status.SKIPPED
    assert "move it to module level" in refused.reason
    moved = "def send(uid):\n    ...\n\n\ndef view(uid: int):\n    send(uid)\n"
    (root / "app/views.py").write_text(moved)
    assert _outcome(root, "    send(uid)", "app.views.send").status is Status.REWRITTEN


def test_a_bound_method_moves_once_it_is_a_static_method(write_files: Files) -> None:
    method = (
        "class Mailer:\n    def send(self, uid):\n        ...\n\n\n"
        "def view(mailer, uid: int):\n    Mailer.send(mailer, uid)\n"
    )
    root = _app(write_files, method)

    refused = _outcome(root, "Mailer.send(", "app.views.Mailer.send")

    assert refused.status is Status.SKIPPED
    assert "make it a module-level function (or a @staticmethod)" in refused.reason
    static = method.replace("    def send(self, uid):", "    @staticmethod\n    def send(uid):")
    (root / "app/views.py").write_text(
        static.replace("Mailer.send(mailer, uid)", "Mailer.send(uid)")
    )
    assert _outcome(root, "Mailer.send(", "app.views.Mailer.send").status is Status.REWRITTEN


def test_a_job_needing_a_key_moves_with_the_key_the_reason_names(write_files: Files) -> None:
    root = _app(write_files, "def send(uid):\n    ...\n\n\ndef view(uid: int):\n    send(uid)\n")
    args = {"arguments": [Argument(name="uid", source="uid", serialisable=True)]}

    refused = _outcome(
        root, "    send(uid)", "app.views.send", verdict=Idempotency.NEEDS_KEY, **args
    )

    assert refused.status is Status.SKIPPED
    assert "or with --key app.views.send=TEMPLATE" in refused.reason
    keyed = ApplyOptions(keys={"app.views.send": "send-{uid}"})
    moved = _outcome(
        root,
        "    send(uid)",
        "app.views.send",
        options=keyed,
        verdict=Idempotency.NEEDS_KEY,
        **args,
    )
    assert moved.status is Status.REWRITTEN, moved.reason


def test_a_caller_reading_the_result_moves_once_it_no_longer_does(write_files: Files) -> None:
    reads = (
        "def send(uid):\n    ...\n\n\ndef view(uid: int):\n    sent = send(uid)\n    return sent\n"
    )
    root = _app(write_files, reads)

    refused = _outcome(
        root, "sent = send(uid)", "app.views.send", result_used=True, result_use_lines=[7]
    )

    assert refused.status is Status.MANUAL
    assert "the caller uses the result (lines 7 read it)" in refused.reason
    (root / "app/views.py").write_text(
        reads.replace("    sent = send(uid)\n    return sent\n", "    send(uid)\n")
    )
    assert _outcome(root, "    send(uid)", "app.views.send").status is Status.REWRITTEN


def test_a_caller_handling_the_jobs_exceptions_moves_once_the_handler_goes(
    write_files: Files,
) -> None:
    handled = (
        "def send(uid):\n    ...\n\n\ndef view(uid: int):\n"
        "    try:\n        send(uid)\n    except OSError:\n        return 'later'\n"
    )
    root = _app(write_files, handled)

    refused = _outcome(root, "        send(uid)", "app.views.send")

    assert refused.status is Status.MANUAL
    assert "move the handling into the job" in refused.reason
    (root / "app/views.py").write_text(
        "def send(uid):\n    ...\n\n\ndef view(uid: int):\n    send(uid)\n"
    )
    assert _outcome(root, "    send(uid)", "app.views.send").status is Status.REWRITTEN


def test_a_value_cast_to_a_model_crosses_by_the_model_codec(write_files: Files) -> None:
    """Formerly "no declared type for `t.cast(...)`": the cast *is* the declaration."""
    views = (
        "import typing as t\n\nfrom app.models import User\n\n\n"
        "def send(user):\n    ...\n\n\n"
        "def view(current_user):\n    user = t.cast(User, current_user)\n    send(user)\n"
    )
    root = _app(write_files, views)
    args = {"arguments": [Argument(name="#0", source="user", serialisable=None)]}

    outcome = _outcome(root, "    send(user)", "app.views.send", **args)

    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert outcome.crossings[0].how is Crossing.CODEC
    assert outcome.crossings[0].detail == "model instance (app.models.User), by reference"


def test_an_annotated_assignment_is_bound_once(write_files: Files) -> None:
    """Formerly "bound more than once" for ``uid: int = 5``."""
    views = "def send(uid):\n    ...\n\n\ndef view():\n    uid: int = 5\n    send(uid)\n"
    root = _app(write_files, views)
    args = {"arguments": [Argument(name="#0", source="uid", serialisable=None)]}

    outcome = _outcome(root, "    send(uid)", "app.views.send", **args)

    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert [c.how for c in outcome.crossings] == [Crossing.JSON]


def test_a_job_reached_through_a_spawn_wrapper_names_the_wrapper_then_moves(
    write_files: Files,
) -> None:
    """The scan follows ``tasks.spawn(refresh)`` to the ``create_task`` inside it; apply has
    no rewrite for the wrapper's call, and says so instead of "rescan"."""
    wrapper = (
        "import asyncio\n\nfrom app import tasks\n\n\nasync def refresh():\n    ...\n\n\n"
        "async def view():\n    tasks.spawn(refresh)\n"
    )
    root = _app(write_files, wrapper)
    (root / "app/tasks.py").write_text(
        "import asyncio\n\n\ndef spawn(fn):\n    return asyncio.create_task(fn())\n"
    )

    refused = _outcome(root, "    tasks.spawn(refresh)", "app.views.refresh", Pattern.ASYNCIO_TASK)

    assert refused.status is Status.SKIPPED
    assert "`tasks.spawn`" in refused.reason and "spawn wrapper" in refused.reason
    assert "rescan" not in refused.reason
    direct = wrapper.replace("tasks.spawn(refresh)", "asyncio.create_task(refresh())")
    (root / "app/views.py").write_text(direct)
    moved = _outcome(
        root, "    asyncio.create_task(refresh())", "app.views.refresh", Pattern.ASYNCIO_TASK
    )
    assert moved.status is Status.REWRITTEN
