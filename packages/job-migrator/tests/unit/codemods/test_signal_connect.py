"""A receiver that is the job, registered with ``signal.connect(handler, ...)`` (in ``ready()``,
in the same module, ``receiver=``): the connect call registers ``<name>_receiver``, which
enqueues the job; every registration is rewritten, or none (docs/apply.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from codemods._types import SiteOutcome
from inventory.models import Pattern
from tests.unit.codemods.conftest import build_inventory

Files = Callable[[dict[str, str]], Path]

MODELS = """from django.db import models


class Order(models.Model):
    total = models.IntegerField()
"""

SIGNALS = """from django.core.cache import cache


def reindex(sender, instance, **kwargs):
    cache.delete(f"order:{instance.pk}")
"""

APPS = """from django.apps import AppConfig
from django.db.models.signals import post_save


class ShopConfig(AppConfig):
    name = "shop"

    def ready(self):
        from shop import signals
        from shop.models import Order

        post_save.connect(signals.reindex, sender=Order, dispatch_uid="shop.reindex")
"""

APPS_AFTER = """from django.apps import AppConfig
from django.db.models.signals import post_save


def reindex_receiver(sender, **kwargs):
    from shop.signals import reindex
    kwargs.pop("signal", None)  # a live Signal object: not passed on
    reindex.enqueue(sender=sender, **kwargs)


class ShopConfig(AppConfig):
    name = "shop"

    def ready(self):
        from shop import signals
        from shop.models import Order

        post_save.connect(reindex_receiver, sender=Order, dispatch_uid="shop.reindex")
"""

JOB = "shop.signals.reindex"


def _apply(
    write_files: Files, files: dict[str, str], sites: list[tuple[str, str]]
) -> tuple[list[SiteOutcome], dict[str, str]]:
    root = write_files({"shop/__init__.py": "", "shop/models.py": MODELS, **files})
    found = [(path, fragment, Pattern.SIGNAL_RECEIVER, JOB) for path, fragment in sites]
    result = plan_apply(root, build_inventory(root, found), scanner=None)
    return result.outcomes, {c.path: c.after for c in result.changes}


def test_a_connect_call_in_ready_registers_a_new_receiver_that_enqueues_the_job(
    write_files: Files,
) -> None:
    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": SIGNALS, "shop/apps.py": APPS},
        [("shop/apps.py", "post_save.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN], outcomes[0].reason
    assert after["shop/apps.py"] == APPS_AFTER  # sender= and dispatch_uid= kept
    assert '@job(pool="batch", idempotent=True)\ndef reindex(' in after["shop/signals.py"]


def test_a_connect_call_in_the_jobs_module_by_keyword(write_files: Files) -> None:
    same = SIGNALS.replace(
        "from django.core.cache import cache\n",
        "from django.core.cache import cache\nfrom django.db.models.signals import post_save\n",
    )
    same += "\n\npost_save.connect(receiver=reindex, sender='shop.Order')\n"

    outcomes, after = _apply(
        write_files, {"shop/signals.py": same}, [("shop/signals.py", "post_save.connect(")]
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN], outcomes[0].reason
    text = after["shop/signals.py"]
    assert (
        "def reindex_receiver(sender, **kwargs):\n"
        '    kwargs.pop("signal", None)  # a live Signal object: not passed on\n'
        "    reindex.enqueue(sender=sender, **kwargs)\n"
        "\n\n"
        "post_save.connect(receiver=reindex_receiver, sender='shop.Order')\n"
    ) in text
    assert "from shop.signals import" not in text  # the job is in this module
    compile(text, "signals.py", "exec")


def test_a_connect_call_inside_a_module_level_if_block_keeps_its_condition(
    write_files: Files,
) -> None:
    """``if settings.X: signal.connect(job)`` (django-cms registers its permission receivers so):
    the new receiver is defined before the block, the connect call stays inside it."""
    guarded = SIGNALS.replace(
        "from django.core.cache import cache\n",
        "from django.conf import settings\nfrom django.core.cache import cache\n"
        "from django.db.models.signals import post_save\n",
    )
    guarded += "\n\nif settings.DEBUG:\n    post_save.connect(reindex, sender='shop.Order')\n"

    outcomes, after = _apply(
        write_files, {"shop/signals.py": guarded}, [("shop/signals.py", "post_save.connect(")]
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN], outcomes[0].reason
    text = after["shop/signals.py"]
    assert (
        "def reindex_receiver(sender, **kwargs):\n"
        '    kwargs.pop("signal", None)  # a live Signal object: not passed on\n'
        "    reindex.enqueue(sender=sender, **kwargs)\n"
        "\n\n"
        "if settings.DEBUG:\n"
        "    post_save.connect(reindex_receiver, sender='shop.Order')\n"
    ) in text
    compile(text, "signals.py", "exec")


def test_a_post_delete_connect_snapshots_the_deleted_instance(write_files: Files) -> None:
    deletes = APPS.replace("post_save", "post_delete")

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": SIGNALS, "shop/apps.py": deletes},
        [("shop/apps.py", "post_delete.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN], outcomes[0].reason
    text = after["shop/apps.py"]
    assert 'kwargs["instance"] = snapshot(kwargs["instance"])' in text
    assert 'kwargs.pop("origin", None)' in text
    assert "from queue_runtime.codecs import snapshot\n" in text


def test_invalid_two_connect_calls_one_of_a_pre_signal_neither_is_rewritten(
    write_files: Files,
) -> None:
    """A registration left in place would still run the job in-process: all or none, and the
    reason names every place."""
    also = APPS.replace(
        '        post_save.connect(signals.reindex, sender=Order, dispatch_uid="shop.reindex")\n',
        "        post_save.connect(signals.reindex, sender=Order)\n"
        "        pre_save.connect(signals.reindex, sender=Order)\n",
    ).replace("import post_save", "import post_save, pre_save")

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": SIGNALS, "shop/apps.py": also},
        [("shop/apps.py", "post_save.connect("), ("shop/apps.py", "pre_save.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.SKIPPED, Status.SKIPPED]
    assert after == {}
    reason = outcomes[0].reason
    assert "2 registrations of it were found (shop/apps.py:12, shop/apps.py:13)" in reason
    assert "the one at shop/apps.py:13 is of a signal whose receiver stays in-process" in reason


def test_invalid_a_connected_job_reading_its_signal_stays(write_files: Files) -> None:
    reads = SIGNALS.replace(
        'cache.delete(f"order:{instance.pk}")', 'cache.delete(kwargs["signal"])'
    )

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": reads, "shop/apps.py": APPS},
        [("shop/apps.py", "post_save.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.SKIPPED] and after == {}
    assert "stop reading `signal` in it" in outcomes[0].reason


def test_a_job_connected_to_post_save_and_post_delete_gets_a_receiver_for_each(
    write_files: Files,
) -> None:
    """The post_delete receiver snapshots the instance, the post_save one lets the worker read
    the row again: two receivers, one job (django-cms's clean_page_choices_cache, wagtail's
    reset_locales_display_names_cache)."""
    both = APPS.replace(
        '        post_save.connect(signals.reindex, sender=Order, dispatch_uid="shop.reindex")\n',
        "        post_save.connect(signals.reindex, sender=Order)\n"
        "        post_delete.connect(signals.reindex, sender=Order)\n",
    ).replace("import post_save", "import post_delete, post_save")

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": SIGNALS, "shop/apps.py": both},
        [("shop/apps.py", "post_save.connect("), ("shop/apps.py", "post_delete.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN, Status.REWRITTEN]
    text = after["shop/apps.py"]
    assert "        post_save.connect(reindex_receiver, sender=Order)\n" in text
    assert "        post_delete.connect(reindex_deleted_receiver, sender=Order)\n" in text
    saved = text[text.index("def reindex_receiver") :].split("\n\n\n")[0]
    deleted = text[text.index("def reindex_deleted_receiver") :].split("\n\n\n")[0]
    assert "snapshot(" not in saved and "reindex.enqueue(sender=sender, **kwargs)" in saved
    assert 'kwargs["instance"] = snapshot(kwargs["instance"])' in deleted
    compile(text, "apps.py", "exec")


def test_invalid_a_job_connected_to_post_delete_that_changes_the_instance_moves_nowhere(
    write_files: Files,
) -> None:
    """A post_delete worker would change a copy: that connect stays, so (all or none) the
    post_save one stays too."""
    changes = SIGNALS.replace('cache.delete(f"order:{instance.pk}")', "instance.total = 0")
    both = APPS.replace(
        '        post_save.connect(signals.reindex, sender=Order, dispatch_uid="shop.reindex")\n',
        "        post_save.connect(signals.reindex, sender=Order)\n"
        "        post_delete.connect(signals.reindex, sender=Order)\n",
    ).replace("import post_save", "import post_delete, post_save")

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": changes, "shop/apps.py": both},
        [("shop/apps.py", "post_save.connect("), ("shop/apps.py", "post_delete.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.SKIPPED, Status.SKIPPED] and after == {}
    assert "changes the instance" in outcomes[0].reason


def test_a_connected_job_taking_args_moves_since_signals_pass_only_keywords(
    write_files: Files,
) -> None:
    """``def clear_cache(sender, *args, **kwargs)`` (pretix's statistics plugin): ``Signal.send``
    calls ``receiver(signal=self, sender=sender, **named)``, so ``*args`` is always empty."""
    starred = SIGNALS.replace(
        "def reindex(sender, instance, **kwargs):", "def reindex(sender, *args, **kwargs):"
    )
    starred = starred.replace('cache.delete(f"order:{instance.pk}")', 'cache.delete("orders")')

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": starred, "shop/apps.py": APPS},
        [("shop/apps.py", "post_save.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN], outcomes[0].reason
    assert "post_save.connect(reindex_receiver, sender=Order" in after["shop/apps.py"]


def test_invalid_a_connected_job_with_positional_only_parameters_stays(write_files: Files) -> None:
    posonly = SIGNALS.replace(
        "def reindex(sender, instance, **kwargs):", "def reindex(sender, /, instance, **kwargs):"
    )

    outcomes, after = _apply(
        write_files,
        {"shop/signals.py": posonly, "shop/apps.py": APPS},
        [("shop/apps.py", "post_save.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.SKIPPED] and after == {}
    assert "positional-only parameters" in outcomes[0].reason


def test_a_connect_call_after_an_if_block_that_gained_a_receiver_is_still_found(
    write_files: Files,
) -> None:
    """django-cms's shape: a connect under ``if settings.DEBUG:``, then a top-level connect of
    another job; the receiver added before the ``if`` must not shift the second site."""
    signals = (
        "from django.conf import settings\nfrom django.core.cache import cache\n"
        "from django.db.models.signals import post_save\n\n\n"
        "def reindex(sender, instance, **kwargs):\n    cache.delete('a')\n\n\n"
        "def restart(sender, **kwargs):\n    cache.delete('b')\n\n\n"
        "if settings.DEBUG:\n    post_save.connect(reindex)\n\n\n"
        "post_save.connect(  # restart\n    restart,\n    dispatch_uid='restart',\n)\n"
    )
    root = write_files(
        {"shop/__init__.py": "", "shop/models.py": MODELS, "shop/signals.py": signals}
    )
    found = [
        ("shop/signals.py", "post_save.connect(reindex)", Pattern.SIGNAL_RECEIVER, JOB),
        (
            "shop/signals.py",
            "connect(  # restart",
            Pattern.SIGNAL_RECEIVER,
            "shop.signals.restart",
        ),
    ]
    result = plan_apply(root, build_inventory(root, found), scanner=None)

    assert [o.status for o in result.outcomes] == [Status.REWRITTEN, Status.REWRITTEN], [
        o.reason for o in result.outcomes
    ]
    [change] = result.changes
    assert "    post_save.connect(reindex_receiver)\n" in change.after
    assert (
        "post_save.connect(  # restart\n    restart_receiver,\n    dispatch_uid='restart',\n)\n"
        in change.after
    )
    assert change.after.index("def reindex_receiver") < change.after.index("if settings.DEBUG:")
    compile(change.after, "signals.py", "exec")


def test_a_connected_job_that_tests_disconnect_by_name_stays_until_they_use_the_uid(
    write_files: Files,
) -> None:
    """``post_save.disconnect(signals.reindex, sender=Order)`` in a test would find nothing
    once ``reindex_receiver`` is what is registered; by its dispatch_uid it finds it."""
    by_name = (
        "from django.db.models.signals import post_save\n\n"
        "from shop import signals\nfrom shop.models import Order\n\n\n"
        "def test_bulk():\n    post_save.disconnect(signals.reindex, sender=Order)\n"
    )
    files = {"shop/signals.py": SIGNALS, "shop/apps.py": APPS, "tests/test_bulk.py": by_name}

    outcomes, after = _apply(write_files, files, [("shop/apps.py", "post_save.connect(")])

    assert [o.status for o in outcomes] == [Status.SKIPPED] and not after
    assert "tests/test_bulk.py:8 disconnects it by name" in outcomes[0].reason
    by_uid = by_name.replace(
        "post_save.disconnect(signals.reindex, sender=Order)",
        'post_save.disconnect(sender=Order, dispatch_uid="shop.reindex")',
    )
    outcomes, after = _apply(
        write_files,
        {**files, "tests/test_bulk.py": by_uid},
        [("shop/apps.py", "post_save.connect(")],
    )

    assert [o.status for o in outcomes] == [Status.REWRITTEN], outcomes[0].reason
    assert after["shop/apps.py"] == APPS_AFTER
