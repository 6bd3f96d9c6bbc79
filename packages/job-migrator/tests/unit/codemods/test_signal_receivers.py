"""Signal receivers move: a receiver that is the job is split into the job and a receiver that
enqueues it; Django's live ``signal`` object is never passed on (docs/apply.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory.models import Argument, Pattern
from tests.unit.codemods.conftest import build_inventory

MODELS = """from django.db import models


class Order(models.Model):
    total = models.IntegerField()
"""

RECEIVERS = """from django.db.models.signals import post_save
from django.dispatch import receiver

from shop.models import Order


@receiver(post_save, sender=Order)
def reindex(sender, instance, created, **kwargs):
    instance.refresh_index()


def index_later(sender, instance, **kwargs):
    ...


@receiver(post_save, sender=Order)
def forward(sender, instance, **kwargs):
    index_later(sender, instance, **kwargs)
"""

SPLIT = """@job(pool="batch", idempotent=True)
def reindex(sender, instance, created, **kwargs):
    instance.refresh_index()


@receiver(post_save, sender=Order)
def reindex_receiver(sender, instance, created, **kwargs):
    kwargs.pop("signal", None)  # a live Signal object: not passed on
    reindex.enqueue(sender=sender, instance=instance, created=created, **kwargs)
"""

Files = Callable[[dict[str, str]], Path]


def _shop(write_files: Files, receivers: str = RECEIVERS) -> Path:
    files = {"shop/__init__.py": "", "shop/models.py": MODELS, "shop/receivers.py": receivers}
    return write_files(files)


def _plan(root: Path, fragment: str, job: str) -> tuple[Status, str, str]:
    site = ("shop/receivers.py", fragment, Pattern.SIGNAL_RECEIVER, job)
    inventory = build_inventory(root, [site])
    inventory.sites[0].arguments = [
        Argument(name="sender", source="sender", serialisable=None),
        Argument(name="instance", source="instance", serialisable=None),
    ]
    result = plan_apply(root, inventory, scanner=None)
    [outcome] = result.outcomes
    after = next((c.after for c in result.changes if c.path == "shop/receivers.py"), "")
    return outcome.status, outcome.reason, after


def test_a_receiver_that_is_the_job_becomes_the_job_and_a_receiver_enqueues_it(
    write_files: Files,
) -> None:
    root = _shop(write_files)

    status, reason, after = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.REWRITTEN, reason
    assert SPLIT in after
    assert after.count("@receiver(post_save, sender=Order)") == 2  # forward's, and the new one
    compile(after, "receivers.py", "exec")


def test_a_receiver_calling_its_job_with_kwargs_passes_them_on_without_the_signal(
    write_files: Files,
) -> None:
    root = _shop(write_files)

    status, reason, after = _plan(root, "    index_later(", "shop.receivers.index_later")

    assert status is Status.REWRITTEN, reason
    assert (
        "    index_later.enqueue(sender, instance, "
        '**{k: v for k, v in kwargs.items() if k != "signal"})\n' in after
    )


def test_a_receiver_reading_its_signal_stays_until_it_no_longer_does(write_files: Files) -> None:
    """The refusal's one change (stop reading `signal`) makes the receiver move."""
    reads = RECEIVERS.replace(
        "    instance.refresh_index()\n", '    instance.refresh_index(kwargs["signal"])\n', 1
    )
    root = _shop(write_files, reads)

    status, reason, after = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.SKIPPED and after == ""
    assert "stop reading `signal` in it, and apply again" in reason
    (root / "shop/receivers.py").write_text(RECEIVERS)
    assert _plan(root, "def reindex(", "shop.receivers.reindex")[0] is Status.REWRITTEN


def test_a_receiver_connected_by_a_call_moves_through_a_new_receiver(write_files: Files) -> None:
    """The connect call registers ``reindex_receiver``; the function stays, as the job."""
    connected = RECEIVERS.replace(
        "@receiver(post_save, sender=Order)\ndef reindex(", "def reindex("
    )
    connected += "\n\npost_save.connect(reindex, sender=Order)\n"
    root = _shop(write_files, connected)

    status, reason, after = _plan(root, "post_save.connect(reindex", "shop.receivers.reindex")

    assert status is Status.REWRITTEN, reason
    assert "\n\npost_save.connect(reindex_receiver, sender=Order)\n" in after
    assert "@job(" in after and "def reindex_receiver(sender, **kwargs):" in after


DELETES = """from django.db.models.signals import post_delete
from django.dispatch import receiver

from shop.models import Order


def drop_files(order_id):
    ...


@receiver(post_delete, sender=Order)
def forget(sender, instance, **kwargs):
    drop_files(instance)
"""


DELETE_SPLIT = """@job(pool="batch", idempotent=True)
def forget(sender, instance, **kwargs):
    drop_files(instance)


@receiver(post_delete, sender=Order)
def forget_receiver(sender, instance, **kwargs):
    kwargs.pop("signal", None)  # a live Signal object: not passed on
    kwargs.pop("origin", None)  # what delete() was called on (gone too): not passed on
    forget.enqueue(sender=sender, instance=snapshot(instance), **kwargs)
"""


def test_a_post_delete_receiver_moves_with_the_deleted_instance_by_value(
    write_files: Files,
) -> None:
    """The row is gone when a worker runs: the new receiver snapshots the instance (its field
    values, rebuilt in the worker) and drops ``origin``."""
    root = _shop(write_files, DELETES)

    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.REWRITTEN, reason
    assert DELETE_SPLIT in after
    assert "from queue_runtime.codecs import snapshot\n" in after
    compile(after, "receivers.py", "exec")


def test_a_job_a_post_delete_receiver_hands_the_instance_gets_a_snapshot(
    write_files: Files,
) -> None:
    root = _shop(write_files, DELETES)

    status, reason, after = _plan(root, "    drop_files(", "shop.receivers.drop_files")

    assert status is Status.REWRITTEN, reason
    assert "    drop_files.enqueue(snapshot(instance))\n" in after
    assert "from queue_runtime.codecs import snapshot\n" in after


def test_a_post_delete_receiver_reading_origin_stays_until_it_no_longer_does(
    write_files: Files,
) -> None:
    reads = DELETES.replace("drop_files(instance)", 'drop_files(kwargs["origin"])')
    root = _shop(write_files, reads)

    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.SKIPPED and after == ""
    assert "reads the `origin` Django passes it" in reason
    (root / "shop/receivers.py").write_text(DELETES)
    assert _plan(root, "def forget(", "shop.receivers.forget")[0] is Status.REWRITTEN


def test_a_pre_delete_receiver_stays_its_job_call_with_values_moves(write_files: Files) -> None:
    """pre_delete runs before the row goes (it may still read relations, veto by raising): moved,
    it would run after the delete; it stays, and a job it calls with values moves."""
    pre = DELETES.replace("post_delete", "pre_delete")
    root = _shop(write_files, pre)

    whole, reason, _ = _plan(root, "def forget(", "shop.receivers.forget")
    inner, inner_reason, _ = _plan(root, "    drop_files(", "shop.receivers.drop_files")

    assert (whole, inner) == (Status.SKIPPED, Status.SKIPPED)
    assert "the receiver handles pre_delete" in reason and reason == inner_reason
    (root / "shop/receivers.py").write_text(
        pre.replace("drop_files(instance)", "drop_files(instance.pk)")
    )
    status, _, after = _plan(root, "    drop_files(", "shop.receivers.drop_files")
    assert status is Status.REWRITTEN
    assert "    drop_files.enqueue(instance.pk)\n" in after


def test_a_receiver_of_post_delete_and_another_signal_stays(write_files: Files) -> None:
    """Only a post_delete receiver moves by value: one also connected to post_save would get
    a copy of a live row instead of reading it again."""
    both = DELETES.replace(
        "@receiver(post_delete, sender=Order)", "@receiver([post_save, post_delete], sender=Order)"
    ).replace("import post_delete", "import post_delete, post_save")
    root = _shop(write_files, both)

    status, reason, _ = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.SKIPPED
    assert "the receiver handles post_delete" in reason


def test_a_receiver_returning_a_value_moves_once_it_no_longer_returns_one(
    write_files: Files,
) -> None:
    """``send()`` hands a receiver's value to the sender (signals as a plugin registry): refused,
    and the reason's change (stop returning it) moves the receiver."""
    returns = RECEIVERS.replace(
        "    instance.refresh_index()\n", "    return instance.refresh_index()\n", 1
    )
    root = _shop(write_files, returns)

    status, reason, after = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.SKIPPED and after == ""
    assert "returns a value: `signal.send()` hands it to the sender" in reason
    assert "stop returning it, and apply again" in reason
    (root / "shop/receivers.py").write_text(RECEIVERS)
    assert _plan(root, "def reindex(", "shop.receivers.reindex")[0] is Status.REWRITTEN


def test_a_pre_save_receiver_stays_its_job_call_with_values_moves(write_files: Files) -> None:
    """A pre_save receiver's changes must happen before the save: it stays; a job it calls with
    values (not the instance) moves."""
    pre = RECEIVERS.replace("post_save", "pre_save")
    root = _shop(write_files, pre)

    status, reason, _ = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.SKIPPED
    assert "the receiver handles pre_save, sent before the sender acts" in reason
    values = pre.replace(
        "    index_later(sender, instance, **kwargs)\n", "    index_later(instance.pk)\n"
    )
    (root / "shop/receivers.py").write_text(values)
    status, why, after = _plan(root, "    index_later(", "shop.receivers.index_later")
    assert status is Status.REWRITTEN, why
    assert "    index_later.enqueue(instance.pk)\n" in after


CHANGES = DELETES.replace(
    "    drop_files(instance)\n",
    "    if instance.screenshot:\n        instance.screenshot.delete(save=False)\n",
)
READS_ONLY = DELETES.replace(
    "    drop_files(instance)\n",
    "    if instance.screenshot:\n        default_storage.delete(instance.screenshot.name)\n",
).replace(
    "from shop.models", "from django.core.files.storage import default_storage\nfrom shop.models"
)


def test_a_post_delete_receiver_changing_its_instance_stays_until_it_only_reads_it(
    write_files: Files,
) -> None:
    """By value, the worker would clear the field of a copy: the caller's object (which the
    caller may read after ``delete()``, as django-tellme's own suite does) would keep it. The
    reason's change (read the values, call nothing on ``instance``) makes it move."""
    root = _shop(write_files, CHANGES)

    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.SKIPPED and after == ""
    assert "changes the instance it is given (`instance.screenshot.delete(save=False)`)" in reason
    (root / "shop/receivers.py").write_text(READS_ONLY)
    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")
    assert status is Status.REWRITTEN, reason
    assert "instance=snapshot(instance)" in after


CACHED_MODELS = """from django.core.cache import cache
from django.db import models


class Order(models.Model):
    total = models.IntegerField()
    note = models.CharField(max_length=10)

    @property
    def cache_backend(self):
        return cache

    def purge_from_cache(self):
        self.cache_backend.delete(f"order:{self.pk}")

    def forget_note(self):
        self.note = ""
"""


def _cached_shop(write_files: Files, call: str) -> Path:
    body = DELETES.replace("    drop_files(instance)\n", f"    instance.{call}()\n")
    files = {"shop/__init__.py": "", "shop/models.py": CACHED_MODELS, "shop/receivers.py": body}
    return write_files(files)


def test_a_post_delete_receiver_whose_method_only_deletes_a_cache_key_moves(
    write_files: Files,
) -> None:
    """The method is read, not guessed from its call: ``purge_from_cache`` deletes a key of
    the cache a property returns and stores nothing into the instance, so the instance goes
    by value (wagtail's rendition-cache receiver has this shape)."""
    root = _cached_shop(write_files, "purge_from_cache")

    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.REWRITTEN, reason
    assert "forget.enqueue(sender=sender, instance=snapshot(instance), **kwargs)" in after


def test_a_post_delete_receiver_whose_method_stores_into_the_instance_stays(
    write_files: Files,
) -> None:
    root = _cached_shop(write_files, "forget_note")

    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.SKIPPED and after == ""
    assert (
        'changes the instance it is given (`instance.forget_note(), which changes it: `self.note = ""`'
        "`, shop/models.py:17)"
    ) in reason


def test_a_call_on_the_instance_the_scan_cannot_follow_stays_until_the_reason_is_followed(
    write_files: Files,
) -> None:
    """The reason names the catalogue entry that says the call only reads; written into
    pyproject.toml as given, the next scan trusts it and the receiver moves."""
    root = _cached_shop(write_files, "archive_later")

    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")

    assert status is Status.SKIPPED and after == ""
    assert "calls `instance.archive_later()` on the instance it is given, which the scan" in reason
    entry = reason.split("[[tool.migrator.catalogue.pure]] ", 1)[1].split(")", 1)[0]
    assert entry == "call = \"?.archive_later\", receiver = '^instance$'"
    (root / "pyproject.toml").write_text(
        "[[tool.migrator.catalogue.pure]]\n" + entry.replace(", ", "\n") + "\n"
    )
    status, reason, after = _plan(root, "def forget(", "shop.receivers.forget")
    assert status is Status.REWRITTEN, reason
    assert "instance=snapshot(instance)" in after


def test_a_connected_post_delete_receiver_changing_its_instance_stays(
    write_files: Files,
) -> None:
    connected = (
        CHANGES.replace("@receiver(post_delete, sender=Order)\n", "")
        + "\n\npost_delete.connect(forget, sender=Order)\n"
    )
    root = _shop(write_files, connected)

    status, reason, after = _plan(root, "post_delete.connect(", "shop.receivers.forget")

    assert status is Status.SKIPPED and after == "", reason
    assert "changes the instance it is given (`instance.screenshot.delete(save=False)`)" in reason


REFRESH = """from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.dispatch import receiver

from shop.models import Order


def rebuild(**values):
    ...


@receiver([post_save, post_delete, m2m_changed], sender=Order)
def refresh(sender, **kwargs):
    if kwargs.get("raw") or "reverse" in kwargs:
        return
    rebuild()
"""

REFRESH_SPLIT = """@receiver([post_save, post_delete, m2m_changed], sender=Order)
def refresh_receiver(sender, **kwargs):
    kwargs.pop("signal", None)  # a live Signal object: not passed on
    kwargs.pop("origin", None)  # what delete() was called on (gone too): not passed on
    kwargs.pop("instance", None)  # never read by the job, and its row may be deleted: not passed on
    refresh.enqueue(sender=sender, **kwargs)
"""


def test_a_receiver_of_post_delete_that_never_reads_its_instance_moves_without_it(
    write_files: Files,
) -> None:
    """A receiver of post_save, post_delete and m2m_changed that only reads literal keys of its
    ``**kwargs`` (oscar's materialised-view refresh): the deleted row is nothing to it, so its
    new receiver passes neither ``instance`` nor ``origin``, and nothing reads a deleted row."""
    root = _shop(write_files, REFRESH)

    status, reason, after = _plan(root, "def refresh(", "shop.receivers.refresh")

    assert status is Status.REWRITTEN, reason
    assert REFRESH_SPLIT in after
    assert "snapshot" not in after
    compile(after, "receivers.py", "exec")


def test_a_named_instance_the_receiver_never_reads_is_passed_as_none(write_files: Files) -> None:
    named = REFRESH.replace(
        "def refresh(sender, **kwargs):", "def refresh(sender, instance, **kwargs):"
    )
    root = _shop(write_files, named)

    status, reason, after = _plan(root, "def refresh(", "shop.receivers.refresh")

    assert status is Status.REWRITTEN, reason
    assert "    refresh.enqueue(sender=sender, instance=None, **kwargs)\n" in after


def test_a_receiver_of_post_delete_that_reaches_its_instance_any_way_stays(
    write_files: Files,
) -> None:
    """Every way the instance can still reach the job keeps the receiver in-process: read by
    name or by key, ``**kwargs`` handed on or looped over, or a ``pre_*`` signal beside."""
    adversaries = {
        "named and read": REFRESH.replace(
            "def refresh(sender, **kwargs):", "def refresh(sender, instance, **kwargs):"
        ).replace("    rebuild()", "    rebuild(pk=instance.pk)"),
        "read by key": REFRESH.replace("    rebuild()", '    rebuild(pk=kwargs["instance"].pk)'),
        "read by get": REFRESH.replace("    rebuild()", '    rebuild(x=kwargs.get("instance"))'),
        "handed on": REFRESH.replace("    rebuild()", "    rebuild(**kwargs)"),
        "looped over": REFRESH.replace("    rebuild()", "    rebuild(**{k: 1 for k in kwargs})"),
        "a pre_save beside": REFRESH.replace(
            "[post_save, post_delete, m2m_changed]", "[pre_save, post_delete]"
        ),
    }
    for name, source in adversaries.items():
        root = _shop(write_files, source)
        status, reason, after = _plan(root, "def refresh(", "shop.receivers.refresh")
        assert status is Status.SKIPPED and after == "", name
        assert "the receiver handles p" in reason, (name, reason)


BULK = """from django.db.models.signals import post_save

from shop import receivers
from shop.models import Order


def reprice_all():
    post_save.disconnect({receiver}, sender=Order)
    try:
        for order in Order.objects.all():
            order.save()
    finally:
        post_save.connect({connect}, sender=Order)
"""


def test_a_receiver_disconnected_by_name_stays_until_it_is_disconnected_by_dispatch_uid(
    write_files: Files,
) -> None:
    """Django's disconnect looks a registration up by the function: once apply registers
    `reindex_receiver`, `post_save.disconnect(receivers.reindex, ...)` would find nothing and
    the bulk job would enqueue a reindex per row it meant to skip. The reason's one change
    (a dispatch_uid, and the disconnect by it) makes the receiver move."""
    root = _shop(write_files)
    by_name = BULK.format(receiver="receivers.reindex", connect="receivers.reindex")
    (root / "shop/bulk.py").write_text(by_name)

    status, reason, after = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.SKIPPED and after == ""
    assert "shop/bulk.py:8 disconnects it by name" in reason, reason
    assert "`post_save.disconnect(receivers.reindex, sender=Order)`" in reason
    assert "give the registration a `dispatch_uid` and disconnect by it" in reason
    uid = RECEIVERS.replace(
        "@receiver(post_save, sender=Order)\ndef reindex(",
        '@receiver(post_save, sender=Order, dispatch_uid="reindex")\ndef reindex(',
    )
    (root / "shop/receivers.py").write_text(uid)
    (root / "shop/bulk.py").write_text(
        by_name.replace(
            "post_save.disconnect(receivers.reindex, sender=Order)",
            'post_save.disconnect(sender=Order, dispatch_uid="reindex")',
        ).replace(
            "post_save.connect(receivers.reindex, sender=Order)",
            'post_save.connect(receivers.reindex_receiver, sender=Order, dispatch_uid="reindex")',
        )
    )

    status, reason, after = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.REWRITTEN, reason
    assert (
        '@receiver(post_save, sender=Order, dispatch_uid="reindex")\ndef reindex_receiver(' in after
    )


def test_a_disconnect_by_keyword_or_plain_name_holds_the_receiver_too(write_files: Files) -> None:
    root = _shop(write_files)
    for call in ("receiver=receivers.reindex", "reindex"):
        bulk = BULK.format(receiver=call, connect="receivers.reindex").replace(
            "from shop import receivers\n",
            "from shop import receivers\nfrom shop.receivers import reindex\n",
        )
        (root / "shop/bulk.py").write_text(bulk)
        status, reason, _ = _plan(root, "def reindex(", "shop.receivers.reindex")
        assert status is Status.SKIPPED and "disconnects it by name" in reason, (call, reason)


def test_a_disconnect_of_another_function_does_not_hold_the_receiver(write_files: Files) -> None:
    root = _shop(write_files)
    other = BULK.format(receiver="receivers.forward", connect="receivers.forward")
    (root / "shop/bulk.py").write_text(other)

    status, reason, _ = _plan(root, "def reindex(", "shop.receivers.reindex")

    assert status is Status.REWRITTEN, reason
