"""What a job changes, in memory, of the objects it is given (``Job.changes``).

A worker runs a moved job on a copy of each argument; the scan says which arguments a job
changes (a store into them, a method that stores into ``self``, a catalogued call acting on
them) and which it calls something on that it could not follow. Django is the installed
library the scan reads here, as in a real project.
"""

from __future__ import annotations

import pytest

from inventory import extract_source, scan
from inventory.models import Job, ParameterChange

MODELS = """import pathlib

from django.core.cache import cache
from django.db import models


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def decrease(self) -> None:
        self.count -= 1


class Image(models.Model):
    file = models.FileField()
    title = models.CharField(max_length=10)
    owner = models.ForeignKey("auth.User", on_delete=models.CASCADE)
    counter: Counter
    export_path: pathlib.Path
    history: list[str]
    meta: dict[str, str]

    @property
    def cache_backend(self):
        return cache

    def purge_from_cache(self):
        self.cache_backend.delete(f"img:{self.pk}")

    def forget_title(self):
        self.title = ""

    def describe(self):
        return f"{self.title} ({self.pk})"

    def ping(self, n):
        if n:
            self.pong(n - 1)

    def pong(self, n):
        self.ping(n)
        self.title = "pinged"
"""

RECEIVERS = """from django.db.models.signals import post_delete
from django.dispatch import receiver

from shop.models import Image


def _clear(image, reason):
    image.tags[reason] = None


@receiver(post_delete, sender=Image)
def purge(instance, **kwargs):
    instance.purge_from_cache()


@receiver(post_delete, sender=Image)
def drop_file(instance, **kwargs):
    instance.file.delete(save=False)


@receiver(post_delete, sender=Image)
def forget(instance, **kwargs):
    instance.forget_title()


@receiver(post_delete, sender=Image)
def count(instance, **kwargs):
    instance.counter.decrease()


@receiver(post_delete, sender=Image)
def mystery(instance, **kwargs):
    instance.unknown_thing()


@receiver(post_delete, sender=Image)
def notify(instance, **kwargs):
    instance.owner.email_user("gone", instance.describe())


@receiver(post_delete, sender=Image)
def handed(instance, **kwargs):
    _clear(instance, "deleted")


@receiver(post_delete, sender=Image)
def stored(instance, **kwargs):
    del instance.title


@receiver(post_delete, sender=Image)
def reread(instance, **kwargs):
    instance.refresh_from_db()
    Image.objects.filter(pk=instance.pk).exists()


@receiver(post_delete, sender=Image)
def export(instance, **kwargs):
    instance.export_path.write_text(instance.title)


@receiver(post_delete, sender=Image)
def cycle(instance, **kwargs):
    instance.ping(3)


@receiver(post_delete, sender=Image)
def cycle_again(instance, **kwargs):
    instance.pong(3)


@receiver(post_delete, sender=Image)
def through_a_copy(instance, **kwargs):
    image = instance
    image.title = ""


@receiver(post_delete, sender=Image)
def from_keywords(sender, **kwargs):
    kwargs["instance"].title = ""


@receiver(post_delete, sender=Image)
def by_setattr(instance, **kwargs):
    setattr(instance, "title", "")


def _note(entries: list) -> None:
    entries.append("deleted")


@receiver(post_delete, sender=Image)
def appended(instance, **kwargs):
    _note(instance.history)


@receiver(post_delete, sender=Image)
def popped(instance, **kwargs):
    instance.meta.pop("draft", None)


@receiver(post_delete, sender=Image)
def own_keywords(instance, **kwargs):
    kwargs.pop("signal", None)
    copied = list(instance.history)
    copied.append("deleted")


@receiver(post_delete, sender=Image)
def into_a_local(instance, **kwargs):
    title = instance.title
    names = {}
    names[title] = instance.pk
"""


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Job]:
    root = tmp_path_factory.mktemp("changes")
    (root / "shop").mkdir()
    (root / "shop/__init__.py").write_text("")
    (root / "shop/models.py").write_text(MODELS)
    (root / "shop/receivers.py").write_text(RECEIVERS)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    return {j.qualname.rpartition(".")[2]: j for j in inventory.jobs}


def _change(jobs: dict[str, Job], name: str) -> ParameterChange | None:
    job = jobs[name]
    assert job.changes is not None, f"{name}: the scan said nothing"
    return next((c for c in job.changes if c.parameter == "instance"), None)


def test_a_method_that_only_deletes_a_cache_key_reached_through_a_property_changes_nothing(
    jobs: dict[str, Job],
) -> None:
    """``self.cache_backend`` is a property: the call acts on the cache it returns."""
    assert _change(jobs, "purge") is None


def test_a_method_storing_into_self_changes_the_instance_and_says_where(
    jobs: dict[str, Job],
) -> None:
    change = _change(jobs, "forget")
    assert change is not None and change.followed
    assert change.change == 'instance.forget_title(), which changes it: `self.title = ""`'
    assert change.location is not None and change.location.path == "shop/models.py"
    assert change.chain == ["shop.receivers.forget", "shop.models.Image.forget_title"]


def test_a_method_of_an_attribute_storing_into_its_self_changes_the_instance(
    jobs: dict[str, Job],
) -> None:
    change = _change(jobs, "count")
    assert change is not None and change.followed
    assert change.change == "instance.counter.decrease(), which changes it: `self.count -= 1`"


def test_a_catalogued_call_on_a_field_of_the_instance_changes_it(jobs: dict[str, Job]) -> None:
    """Django's ``FieldFile.delete`` empties the field's name on the instance."""
    change = _change(jobs, "drop_file")
    assert change is not None and change.followed
    assert change.change == "instance.file.delete(save=False)"


def test_a_call_the_scan_cannot_follow_may_change_it(jobs: dict[str, Job]) -> None:
    change = _change(jobs, "mystery")
    assert change is not None and not change.followed
    assert change.change == "instance.unknown_thing()"


def test_mail_sent_to_a_related_row_and_a_reading_method_change_nothing(
    jobs: dict[str, Job],
) -> None:
    assert _change(jobs, "notify") is None


def test_the_instance_handed_to_a_project_function_is_followed_into_it(
    jobs: dict[str, Job],
) -> None:
    change = _change(jobs, "handed")
    assert change is not None and change.followed
    assert change.change == "image.tags[reason] = None"
    assert change.chain == ["shop.receivers.handed", "shop.receivers._clear"]


def test_a_deleted_attribute_is_a_change(jobs: dict[str, Job]) -> None:
    change = _change(jobs, "stored")
    assert change is not None and change.change == "del instance.title"


@pytest.mark.parametrize(
    ("job", "parameter", "change"),
    [
        ("through_a_copy", "instance", 'image.title = ""'),
        ("from_keywords", "instance", 'kwargs["instance"].title = ""'),
        ("by_setattr", "instance", 'setattr(instance, "title", "")'),
    ],
)
def test_a_change_through_a_copy_the_keywords_or_setattr_is_still_a_change(
    jobs: dict[str, Job], job: str, parameter: str, change: str
) -> None:
    """The ways around ``instance.x = v`` an adversary would try first."""
    found = jobs[job].changes
    assert found is not None
    assert [(c.parameter, c.change) for c in found] == [(parameter, change)]


@pytest.mark.parametrize("job", ["cycle", "cycle_again"])
def test_methods_calling_each_other_are_followed_whichever_is_asked_first(
    jobs: dict[str, Job], job: str
) -> None:
    """``ping`` calls ``pong``, which calls ``ping`` back before it stores into ``self``: the
    cycle is cut for that search only, so neither is remembered as changing nothing."""
    change = _change(jobs, job)
    assert change is not None and change.followed
    assert change.change.endswith('`self.title = "pinged"`')


def test_reading_the_database_through_the_instance_changes_nothing(
    jobs: dict[str, Job],
) -> None:
    """``refresh_from_db`` reloads the worker's copy; the caller keeps the values it had."""
    assert _change(jobs, "reread") is None


def test_a_file_written_through_a_path_the_instance_holds_changes_nothing(
    jobs: dict[str, Job],
) -> None:
    """pathlib's paths are immutable: ``write_text`` changes the file, not the object."""
    assert _change(jobs, "export") is None


def test_a_store_into_a_local_made_from_the_instance_changes_nothing(
    jobs: dict[str, Job],
) -> None:
    assert _change(jobs, "into_a_local") is None


def test_the_extractor_keeps_the_first_store_into_each_parameter() -> None:
    summary = extract_source(
        "class A:\n"
        "    def m(self, other, n):\n"
        "        local = {}\n"
        "        local['k'] = 1\n"
        "        a, other.b = 1, 2\n"
        "        self.x = n\n"
        "        self.y += 1\n"
        "        n = 3\n",
        "a.py",
        "a",
    )
    [fn] = summary.functions
    assert [(s.param, s.text, s.span.line) for s in fn.stores] == [
        ("other", "a, other.b = 1, 2", 5),
        ("self", "self.x = n", 6),
    ]


def test_a_container_changed_in_place_on_the_instance_changes_it(jobs: dict[str, Job]) -> None:
    """``list.append`` is catalogued pure (no effect a retry repeats), yet it changes the
    list in memory: the caller's would keep its old items. ``_note`` declares a list."""
    appended = _change(jobs, "appended")
    assert appended is not None and appended.followed
    assert appended.change == 'entries.append("deleted")'
    assert appended.chain == ["shop.receivers.appended", "shop.receivers._note"]


def test_a_container_method_on_a_receiver_of_unknown_type_may_change_it(
    jobs: dict[str, Job],
) -> None:
    """``instance.meta.pop(...)``: a dict's ``pop``, or another object's of that name (a
    related manager's ``remove`` writes rows, not the object): not proven, left to the
    runtime as any call the scan could not follow."""
    popped = _change(jobs, "popped")
    assert popped is not None and not popped.followed
    assert popped.change == 'instance.meta.pop("draft", None)'
    assert popped.unexplained is not None and popped.unexplained.call == "?.pop"


def test_the_functions_own_keywords_and_a_copy_are_not_the_callers(jobs: dict[str, Job]) -> None:
    """``kwargs`` is a dict Python builds for the call; ``list(...)`` a new list."""
    assert _change(jobs, "own_keywords") is None
    job = jobs["own_keywords"]
    assert job.changes is not None
    assert [c.parameter for c in job.changes] == []
