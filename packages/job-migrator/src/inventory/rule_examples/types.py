"""Types: what a receiver is, so that the method that runs is followed, not left a gap."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

_MODELS = """
import requests
from django.db import models

class TagQuerySet(models.QuerySet):
    def publish(self):
        requests.post("https://hooks.example.com/tags")

class Tag(models.Model):
    name = models.CharField(max_length=40)
    objects = TagQuerySet.as_manager()

    def announce(self):
        requests.post("https://hooks.example.com/tag", json={"id": self.pk})

class Trash(models.Model):
    def delete(self):
        requests.post("https://hooks.example.com/deleted")
"""

EXAMPLES: list[RuleExample] = [
    example(
        "types: containers a job builds for itself",
        """
        def dedupe(names):
            seen = set()
            by_initial = {}
            for name in names:
                seen.add(name)
                by_initial.setdefault(name[:1], []).append(name)
            counts = dict()
            counts.update(total=len(seen))
            return by_initial, counts
        """,
        "dedupe",
        V.IDEMPOTENT,
        set(),
        "`seen = set()`, `by_initial = {}`, `counts = dict()` in a function body are new values "
        "of builtin types made by this run of the job: their methods change nothing a retry "
        "could see. (A container at module or class level outlives the job and is not typed so.)",
    ),
    example(
        "types: each row of a queryset is an instance of its model",
        """
        from shop.models import Tag

        def announce_all(prefix):
            tags = Tag.objects.filter(name__startswith=prefix)
            for tag in tags.iterator():
                tag.announce()
        """,
        "announce_all",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.HTTP_POST},
        "Iterating `Model.objects.filter(...)` (directly, or through a local and `.iterator()`, "
        "`.order_by()`...) gives instances of the model: `tag.announce()` is `Tag.announce`, "
        "and its POST is found.",
        more_files={"shop/models.py": _MODELS},
    ),
    example(
        "types: a model looked up by name with get_model",
        """
        from django.apps import apps

        Tag = apps.get_model("shop", "Tag")

        def announce(tag_id):
            tag = Tag.objects.get(pk=tag_id)
            tag.announce()
        """,
        "announce",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.HTTP_POST},
        '`get_model("shop", "Tag")` (Django\'s, or a project wrapper of that name; also '
        '`get_model("shop.Tag")`) is the project model named `Tag` (the one in the app `shop` '
        "when several share the name); `get_user_model()` is the project's user model, else "
        "Django's `User`.",
        more_files={"shop/models.py": _MODELS},
    ),
    example(
        "types: a method a model inherits from the ORM is not a project override",
        """
        from shop.models import Tag

        def drop(tag_id):
            tag = Tag.objects.get(pk=tag_id)
            tag.delete()
        """,
        "drop",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_DELETE},
        "`Trash.delete` posts a notification, but `tag` is a `Tag`, and neither `Tag` nor a "
        "project base of it defines `delete`: the ORM's `delete` runs, which converges. On a "
        "receiver of unknown type the same call stays a gap (see `unknown: deleting when a "
        "project class overrides delete`).",
        more_files={"shop/models.py": _MODELS},
    ),
    example(
        "types: custom managers built from a queryset class",
        """
        from shop.models import Tag

        def publish_tags():
            Tag.objects.publish()
        """,
        "publish_tags",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "`objects = TagQuerySet.as_manager()` offers the queryset class's methods, and "
        "`objects = TagManager.from_queryset(TagQuerySet)()` the manager class's: "
        "`Tag.objects.publish()` is `TagQuerySet.publish`.",
        more_files={"shop/models.py": _MODELS},
    ),
    example(
        "types: a value returned by a helper of another module",
        """
        from shop.store import get_store

        def record(run_id):
            store = get_store()
            store.create_run(run_id)
        """,
        "record",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "`get_store()` is annotated `-> Store` (or every `return` builds a `Store`; methods "
        "too, `Store.current()`), so `store = get_store()` is a `Store` and "
        "`store.create_run` is followed; so is `self.store = get_store()` in a method, for "
        "`self.store.create_run(...)` in another. A helper whose result type is not known "
        "leaves the receiver of unknown type.",
        more_files={
            "shop/store.py": (
                "import requests\n\n"
                "class Store:\n"
                "    def create_run(self, run_id):\n"
                "        requests.post('https://runs.example.com', json={'id': run_id})\n\n"
                "def get_store() -> Store:\n"
                "    return Store()\n"
            )
        },
    ),
    example(
        "types: an attribute set from a helper's result, and a walrus binding",
        """
        from shop.models import Tag
        from shop.store import get_store

        class Recorder:
            def __init__(self):
                self.store = get_store()

            def record(self, run_id):
                if (tag := Tag.objects.filter(pk=run_id).first()) is not None:
                    tag.announce()
                self.store.create_run(run_id)

        def record(run_id):
            Recorder().record(run_id)
        """,
        "record",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.HTTP_POST, K.EMAIL_SEND},
        "`self.store = get_store()` types `self.store` as what `get_store` returns, and "
        "`tag := ...first()` binds `tag` like an assignment: the mail and the POST are found.",
        more_files={
            "shop/models.py": _MODELS,
            "shop/store.py": (
                "import smtplib\n\n"
                "class Store:\n"
                "    def create_run(self, run_id):\n"
                "        smtplib.SMTP('localhost').sendmail('a@x', ['b@x'], str(run_id))\n\n"
                "def get_store() -> Store:\n"
                "    return Store()\n"
            ),
        },
    ),
    example(
        "types: the elements of what a helper returns",
        """
        from shop.stats import Stats

        def refresh_parents(key):
            for stats in Stats(key).parents():
                stats.refresh()
            [child.refresh() for child in Stats(key).children()]
        """,
        "refresh_parents",
        V.IDEMPOTENT,
        {K.CACHE_SET},
        "`parents` is annotated `-> Iterator[Stats]` (also `Iterable`, `Generator`, `list`, "
        "`Sequence`, `set`, `tuple[X, ...]`, a string or `X | None` element) and `children` "
        "is a generator whose every `yield` builds a `Stats`: the loop and comprehension "
        "variables are `Stats`, so `refresh()` is `Stats.refresh` (a cache overwrite), not "
        "a guess among the project's classes with a `refresh` (`Hook.refresh` posts). A helper "
        "returning a queryset (below) gives rows of its model.",
        more_files={
            "shop/stats.py": (
                "from collections.abc import Iterator\n"
                "from django.core.cache import cache\n\n"
                "class Stats:\n"
                "    def __init__(self, key):\n"
                "        self.key = key\n\n"
                "    def refresh(self):\n"
                "        cache.set(self.key, 0)\n\n"
                "    def parents(self) -> Iterator['Stats']:\n"
                "        return iter([Stats(self.key + ':up')])\n\n"
                "    def children(self):\n"
                "        for suffix in ('a', 'b'):\n"
                "            yield Stats(self.key + suffix)\n"
            ),
            "shop/hooks.py": (
                "import requests\n\n"
                "class Hook:\n"
                "    def refresh(self):\n"
                "        requests.post('https://hooks.example.com/refresh')\n"
            ),
        },
    ),
    example(
        "types: a queryset a helper returns",
        """
        from shop.catalog import Category, hidden

        def hide(category_id):
            category = Category.objects.get(pk=category_id)
            category.hide_subtree()
            hidden().filter(path="").delete()
        """,
        "hide",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE, K.DB_DELETE},
        "`subtree()` returns `self.__class__.objects.filter(...)` (also `Model.objects...`, "
        "`cls.objects...`, a local holding one) and `hidden()` is annotated "
        "`-> QuerySet[Category]`: what they return is a queryset of `Category` rows, so "
        "`self.subtree().update(...)` and `hidden().filter().delete()` are catalogued like "
        "`Category.objects.filter().update(...)` (an overwrite, a delete), and iterating "
        "their result gives `Category` instances. Without that the receiver is of unknown "
        "type and the calls are gaps.",
        more_files={
            "shop/catalog.py": (
                "from django.db import models\n"
                "from django.db.models import QuerySet\n\n"
                "class Category(models.Model):\n"
                "    path = models.CharField(max_length=255)\n"
                "    public = models.BooleanField(default=True)\n\n"
                "    def subtree(self):\n"
                "        return self.__class__.objects.filter(path__startswith=self.path)\n\n"
                "    def hide_subtree(self):\n"
                "        self.subtree().update(public=False)\n\n"
                "def hidden() -> 'QuerySet[Category]':\n"
                "    return Category.objects.filter(public=False)\n"
            )
        },
    ),
    example(
        "types: a new instance a helper returns, saved by the caller",
        """
        from shop.audit import Item

        def log_change(obj, action):
            change = obj.to_entry(action)
            change.save()

        def record(item_id):
            log_change(Item.objects.get(pk=item_id), "touch")
        """,
        "record",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.DB_INSERT},
        "Every project `to_entry` returns an `Entry` it builds without a primary key "
        "(`Renamed.to_entry` through `super()`): `change.save()` saves a new row, an "
        "insert, and a retry inserts another, as for `change = Entry(...); change.save()`. "
        "The same holds when the helper's receiver is typed (`item.to_entry(...)`) or the "
        "helper is a function annotated or seen to return the new instance; a helper that "
        "passes a primary key (`Entry(pk=...)`) updates that row.",
        more_files={
            "shop/audit.py": (
                "from django.db import models\n\n"
                "class Entry(models.Model):\n"
                "    action = models.CharField(max_length=20)\n\n"
                "class Item(models.Model):\n"
                "    name = models.CharField(max_length=20)\n\n"
                "    def to_entry(self, action):\n"
                "        entry = Entry(action=action)\n"
                "        entry.action = action[:20]\n"
                "        return entry\n\n"
                "class Renamed(Item):\n"
                "    def to_entry(self, action):\n"
                "        entry = super().to_entry(action)\n"
                "        entry.action = 'rename'\n"
                "        return entry\n"
            )
        },
    ),
]
