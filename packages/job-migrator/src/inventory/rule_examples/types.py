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

_MAPPED_MODELS = """
from typing import Optional

import requests
from sqlalchemy import select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

class Base(DeclarativeBase):
    pass

class Config:
    def publish(self, name):
        requests.post("https://hooks.example.com/agents", json={"name": name})

class Agent(Base):
    __tablename__ = "agents"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column()
    config: Mapped[Optional[Config]] = mapped_column()

    def announce(self):
        if self.config is not None:
            self.config.publish(self.name)

def configured():
    return select(Agent).where(Agent.config.is_not(None))
"""

_BLOCKS = """
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

class Base(DeclarativeBase):
    pass

class Block(Base):
    __tablename__ = "blocks"
    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column()
    label: Mapped[str] = mapped_column()
"""

_TRACKED = """
import requests
from django.db import models

from shop.signals import order_shipped

class Order(models.Model):
    code = models.CharField(max_length=10)

    def tracking_url(self):
        return "https://carrier.example/track/" + self.code

    def ship(self):
        self.save()
        order_shipped.send(sender=Order, order=self)

class Parcel(models.Model):
    def tracking_url(self):
        requests.post("https://carrier.example/parcels")
        return ""
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
        "could see. (A list or dict at module or class level outlives the job and is not typed "
        "so: what is appended to a module-level list ships later.)",
    ),
    example(
        "types: a module-level partial is the callable it wraps",
        """
        import datetime as dt
        from functools import partial

        import requests

        utcnow = partial(dt.datetime.now, dt.timezone.utc)
        fetch_rates = partial(requests.get, "https://rates.example.com/today", timeout=5)

        def refresh_rates(currency):
            stamp = utcnow()
            return fetch_rates(params={"c": currency, "at": stamp.isoformat()})
        """,
        "refresh_rates",
        V.IDEMPOTENT,
        {K.RANDOM_ID, K.HTTP_GET},
        "`utcnow = partial(datetime.now, UTC)` at module level: calling a partial calls what it "
        'wraps (functools\' own words: it "behaves like func called with" the bound arguments), '
        "so `utcnow()` is a clock read (a time-based value) and `fetch_rates(...)` a GET, here and where the name is "
        "imported. (A partial made inside a function is followed where it is spawned.)",
    ),
    example(
        "types: the two sets a wait returns",
        """
        import asyncio

        import httpx

        async def _fastest(urls):
            async with httpx.AsyncClient() as client:
                tasks = [asyncio.create_task(client.get(url)) for url in urls]
                done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                return [task.result().text for task in done]

        def fastest_mirror(urls):
            return asyncio.run(_fastest(urls))
        """,
        "fastest_mirror",
        V.IDEMPOTENT,
        {K.HTTP_GET},
        "`done, pending = await asyncio.wait(tasks)` binds two sets of tasks (asyncio's "
        'documentation: "Returns two sets of Tasks/Futures: (done, pending)"), and '
        "`concurrent.futures.wait(futures)` two sets of futures: `task.cancel()` over "
        "`pending` is a task's own method, bookkeeping in the process, not an unknown call. "
        "So is a list made of one kind of call (`[asyncio.create_task(...) for u in urls]`, "
        "`[pool.submit(f, a), pool.submit(f, b)]`): its elements are what the call returns, "
        "unless the called name depends on the loop variable. The same unpacking of a project "
        "function's result stays undecided.",
    ),
    example(
        "types: what a library iterator yields",
        """
        import re
        from pathlib import Path

        SLUG = re.compile(r"[a-z0-9-]+")

        def index_slugs(text, cache_dir):
            for stale in Path(cache_dir).glob("*.idx"):
                stale.unlink(missing_ok=True)
            return [(m.group(0), m.end()) for m in SLUG.finditer(text)]
        """,
        "index_slugs",
        V.IDEMPOTENT,
        {K.FILE_DELETE},
        "A loop over `re.finditer` or a pattern's `finditer` gets `re.Match` objects, over "
        "`concurrent.futures.as_completed` the futures, over a `Path`'s `iterdir`, `glob` or "
        "`rglob` paths (each as its documentation says): `m.end()` reads the match, "
        "`stale.unlink()` deletes a file (`file_delete`: a second run finds it gone). A project "
        "method of the same name stays undecided.",
    ),
    example(
        "types: attributes whose class the library documents",
        """
        import subprocess
        from pathlib import Path

        def describe_checkout(result: subprocess.CompletedProcess, settings_file):
            root = Path(settings_file).parent.parent.resolve()
            return {"root": str(root), "sha": result.stdout.strip()}
        """,
        "describe_checkout",
        V.IDEMPOTENT,
        set(),
        'A path\'s `parent` is a path (pathlib: "the logical parent of the path"), a '
        "`CompletedProcess`'s `stdout` and `stderr` its captured output, Flask-SQLAlchemy's "
        "`db.session` a session: a method called through them is that class's "
        "(`Path.resolve`, `str.strip`). The same attribute of a project class is that class's "
        "own.",
    ),
    example(
        "types: SQLAlchemy's Mapped[...] annotations",
        """
        from shop.models import Agent

        def announce_agent(agent: Agent):
            return agent.announce()
        """,
        "announce_agent",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "SQLAlchemy 2 declares a mapped class's attributes as `config: Mapped[Config] = "
        "mapped_column(...)` (or `= relationship()`): on an instance, `self.config` is a "
        "`Config` (or `None` for `Mapped[Optional[Config]]`), so `self.config.publish()` runs "
        "`Config.publish`, followed like any method. On the class, `Agent.config` stays a "
        "column expression (`Agent.config.is_not(None)` builds SQL, runs nothing).",
        more_files={"shop/models.py": _MAPPED_MODELS},
    ),
    example(
        "types: a return annotation does not name a class the settings choose",
        """
        from django.conf import settings
        from django.utils.module_loading import import_string

        from shop.handlers import Handler

        def get_handler() -> Handler:
            return import_string(settings.LOGIN_HANDLER)()

        def on_login_failed(username):
            get_handler().failed(username)
        """,
        "on_login_failed",
        V.UNKNOWN,
        set(),
        "`get_handler() -> Handler` returns `import_string(settings.LOGIN_HANDLER)()`: the "
        "running app's settings choose the class, and the annotation names an interface (as "
        "django-axes' `get_implementation() -> AxesHandler`, whose methods are `pass`, while "
        "the configured handler counts each failure). A function that builds a class whose "
        "path only the settings know returns what they choose: `failed()` is a gap, the job "
        "`unknown` (a pin or a `[tool.migrator.catalogue]` entry decides it). A literal path, "
        "or a literal default in `settings.get(...)`, names the class.",
        more_files={
            "shop/handlers.py": """
                class Handler:
                    def failed(self, username):
                        pass
            """,
        },
    ),
    example(
        "types: a set kept at module level, annotated or not",
        """
        REPORTED = set()
        KNOWN_HOSTS = {"example.com"}

        def report_once(integration, host):
            if integration in REPORTED:
                return
            REPORTED.add(integration)
            KNOWN_HOSTS.discard(host)
        """,
        "report_once",
        V.IDEMPOTENT,
        {K.PROCESS_STATE},
        "`REPORTED = set()` at module level is a set as `REPORTED: set[str] = set()` says with "
        "an annotation: `REPORTED.add(x)` converges (twice is once) and touches nothing outside "
        "the process, so it is no gap. A module-level list is not typed so (a buffer that "
        "grows: a repeating effect). `KNOWN_HOSTS.discard(host)` changes this process's set "
        "(a `process_state` effect: a worker would change its own copy, so `apply` keeps the "
        "job in-process unless named); `REPORTED.add` after reading it is a memo, not counted.",
    ),
    example(
        "types: a class attribute is state of the process, as a module-level one is",
        """
        class EventTypes:
            _pk_map = {}

            def clear_cache(self):
                self.__class__._pk_map = {}

            def pk_for(self, name):
                pk = self.__class__._pk_map.get(name)
                if pk is None:
                    pk = self.__class__._pk_map[name] = len(name)
                return pk

        def forget_event_types():
            EventTypes().clear_cache()
        """,
        "forget_event_types",
        V.IDEMPOTENT,
        {K.PROCESS_STATE},
        "A class is built once per process, at import: `self.__class__._pk_map = {}` (or "
        "`type(self)._pk_map`, `cls._pk_map` in a classmethod, `EventTypes._pk_map` by name, "
        "an item of it set or deleted, a container method called on it) changes what every "
        "instance in this process shares, so it is a `process_state` effect: run by a worker, "
        "the job would clear the worker's map, and the web process would keep its own (`apply` "
        "keeps the job in-process unless named). As for a module-level container, a function "
        "that reads the attribute it fills (`pk_for`, a singleton's `if cls._instance is "
        "None: cls._instance = cls()`) keeps a memo, not counted; so does a helper that only "
        "sets an item of an attribute another method of the class reads (a getter handing "
        "`_set(name, pk)` the value to cache). A reset (`= {}`) or a removal always counts.",
    ),
    example(
        "types: an object a module makes at import, changed through its methods",
        """
        import requests

        from shop.cache import cache

        def refresh_catalog(url):
            cache.set("catalog", requests.get(url).json())
        """,
        "refresh_catalog",
        V.IDEMPOTENT,
        {K.HTTP_GET, K.RANDOM_ID, K.PROCESS_STATE},
        "`cache = Cache()` in `shop/cache.py` is one object per process, made at import; "
        "`Cache.set` stores into `self` (its body is read, as a job's parameters' methods "
        "are), so the call changes state this process holds, as `CACHE[key] = v` on a "
        "module-level dict does: run by a worker, the refresh would fill the worker's cache "
        "and this process would keep serving its own (`apply` keeps the job in-process "
        "unless named). A library's object made at import (Django's `cache`, a `requests."
        "Session()`) is not read so: what it does is the catalogue's.",
        more_files={
            "shop/cache.py": (
                "import time\n\n\n"
                "class Cache:\n"
                "    def __init__(self):\n"
                "        self._values = {}\n\n"
                "    def set(self, key, value):\n"
                "        self._values[key] = (value, time.time())\n\n\n"
                "cache = Cache()\n"
            )
        },
    ),
    example(
        "types: a job that counts and evicts from this process's memory repeats its count",
        """
        from prometheus_client import Counter

        from shop.cache import cache

        EVICTIONS = Counter("evictions", "entries evicted")

        def evict(key):
            cache.drop(key)
            EVICTIONS.inc()
        """,
        "evict",
        V.NON_IDEMPOTENT,
        {K.METRIC_INCR, K.PROCESS_STATE},
        "Next to real work (a write, a send) a metric count is instrumentation; a change of "
        "this process's memory is no such work (it is no outcome a retry repeats elsewhere), "
        "so the count is all a retry repeats, as for a job that only counts.",
        more_files={
            "shop/cache.py": (
                "class Cache:\n"
                "    def __init__(self):\n"
                "        self._values = {}\n\n"
                "    def drop(self, key):\n"
                "        self._values.pop(key, None)\n\n\n"
                "cache = Cache()\n"
            )
        },
    ),
    example(
        "types: a memo on a class attribute is no state a worker would lose",
        """
        class Client:
            _instance = None

            @classmethod
            def get(cls):
                if cls._instance is None:
                    cls._instance = cls()
                return cls._instance

        def warm_client():
            Client.get()
        """,
        "warm_client",
        V.IDEMPOTENT,
        set(),
        "`cls._instance` is read where it is filled: a per-process singleton any process may "
        "build, and what `get` returns does not depend on which one did.",
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
        "types: rows keep their model through list, sorted, enumerate, slices and comprehensions",
        """
        from shop.models import Tag

        def announce_sorted(prefix):
            tags = [t for t in Tag.objects.filter(name__startswith=prefix) if t.name]
            for i, tag in enumerate(sorted(tags, key=lambda t: t.name)[:10]):
                tag.announce()
        """,
        "announce_sorted",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.HTTP_POST},
        "`list(x)`, `tuple(x)`, `sorted(x, ...)`, `reversed(x)`, `set(x)`, `iter(x)`, a slice "
        "`x[a:b]` and a comprehension that yields its own loop variable iterate the elements of "
        "`x` (a name bound to one of them too), and `enumerate(x)` pairs each with a count: "
        "`tag` is still a `Tag`. Likewise a related manager's `first()` / `last()` is one of "
        'its rows, and `ForeignKey("self")` holds a row of the model itself.',
        more_files={"shop/models.py": _MODELS},
    ),
    example(
        "types: isinstance, cast, unpacking and annotated containers",
        """
        from typing import cast
        from shop.models import Tag

        def announce_each(items, by_name: dict[str, Tag]):
            for item in items:
                if isinstance(item, Tag):
                    item.announce()
            tag, created = Tag.objects.get_or_create(name="new")
            tag.announce()
            for name, other in by_name.items():
                cast(Tag, other).announce()
        """,
        "announce_each",
        V.NON_IDEMPOTENT,
        {K.DB_UPSERT, K.HTTP_POST},
        "As a type checker reads them: `isinstance(x, Tag)` narrows `x` in the `if` body (a "
        "project class, alone or in an `and`; not after the `if`, not in an `or`); `cast(Tag, x)` is what the caller "
        "declares; Django's `get_or_create` / `update_or_create` give `(row, created)`; `a, b = "
        "X(), Y()` binds each; `for k, v in d.items()` and `for a, b in zip(x, y)` pair each "
        "variable with its container; a parameter annotated `list[Tag]` or `dict[str, Tag]` "
        "holds Tags.",
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
        'Django\'s `User`; swapper\'s `load_model("shop", "Tag")` (swappable models, as '
        "`AUTH_USER_MODEL`) is the default model it names.",
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
    example(
        "types: values looked up in an annotated container",
        """
        from shop.sessions import Session, open_sessions

        def close_session(sid):
            if session := Session.find(sid):
                session.close()
            for other in open_sessions.values():
                other.close()
        """,
        "close_session",
        V.IDEMPOTENT,
        {K.CACHE_DELETE},
        "`open_sessions: dict[str, Session] = {}` (at module level, in a class body, or "
        "`self.x: dict[str, X]` in a method) says what the container holds: "
        "`open_sessions.get(sid)`, `open_sessions[sid]`, `.pop(sid)`, `.setdefault(...)` give "
        "a `Session` (or None, on which no method runs), and so do `.values()` (or a list's) "
        "elements. An unannotated helper whose every `return` is such a lookup or a "
        "constructor (`return None` branches aside) returns that class, so the walrus "
        "`session := Session.find(sid)` is a `Session` and `session.close()` is followed.",
        more_files={
            "shop/sessions.py": (
                "from typing import Dict\n"
                "from django.core.cache import cache\n\n"
                "class Session:\n"
                "    def __init__(self, sid):\n"
                "        self.sid = sid\n\n"
                "    def close(self):\n"
                "        cache.delete(f'session:{self.sid}')\n\n"
                "    @classmethod\n"
                "    def find(cls, sid):\n"
                "        if not sid:\n"
                "            return None\n"
                "        return open_sessions.get(sid)\n\n"
                "open_sessions: Dict[str, Session] = {}\n"
            )
        },
    ),
    example(
        "types: an attribute set from a parameter or its default",
        """
        from shop.caches import TwoLevel

        def remember(key, value):
            TwoLevel().store(key, value)
        """,
        "remember",
        V.IDEMPOTENT,
        {K.CACHE_SET},
        "`self.local = local or LocalCache()`, `self.remote = RemoteCache() if remote is None "
        "else remote` and `self.backup = backup` with `backup: Optional[RemoteCache]` in "
        "`__init__` type the attributes: every operand whose type is known (a constructor, "
        "an annotated parameter) names the same class, so `self.local.put(...)` is "
        "`LocalCache.put`. Operands of different classes leave the attribute untyped.",
        more_files={
            "shop/caches.py": (
                "from typing import Optional\n"
                "from django.core.cache import cache\n\n"
                "class LocalCache:\n"
                "    def put(self, key, value):\n"
                "        cache.set(f'local:{key}', value)\n\n"
                "class RemoteCache:\n"
                "    def put(self, key, value):\n"
                "        cache.set(f'remote:{key}', value)\n\n"
                "class TwoLevel:\n"
                "    def __init__(self, local=None, remote=None, backup: Optional[RemoteCache] = None):\n"
                "        self.local = local or LocalCache()\n"
                "        self.remote = RemoteCache() if remote is None else remote\n"
                "        self.backup = backup\n\n"
                "    def store(self, key, value):\n"
                "        self.local.put(key, value)\n"
                "        self.remote.put(key, value)\n"
                "        if self.backup is not None:\n"
                "            self.backup.put(key, value)\n"
            )
        },
    ),
    example(
        "types: a list or dict an object makes for itself",
        """
        from shop.batch import Batch

        def collect(names):
            batch = Batch()
            for name in names:
                batch.add(name)
            return batch.summary()
        """,
        "collect",
        V.IDEMPOTENT,
        set(),
        "`self.items = []`, `self.seen = set()`, `self.by_key = {}` (every assignment of the "
        "attribute in the class a literal of one builtin, or an annotation such as "
        "`self.log: list[str] = []`) make the attribute that builtin: `self.items.append(x)` "
        "changes the object's own state, as for a local list. An object some module "
        "instantiates at import is a collector that outlives the job: appending to it "
        "repeats on a retry (see the collectors rule), and an attribute also assigned "
        "something else (`self.items = cache.get(k)`) is not typed.",
        more_files={
            "shop/batch.py": (
                "class Batch:\n"
                "    def __init__(self):\n"
                "        self.items = []\n"
                "        self.seen = set()\n"
                "        self.log: list[str] = []\n\n"
                "    def add(self, name):\n"
                "        self.items.append(name)\n"
                "        self.seen.add(name)\n"
                "        self.log.append(f'added {name}')\n\n"
                "    def summary(self):\n"
                "        return len(self.items), sorted(self.seen)\n"
            )
        },
    ),
    example(
        "types: a reverse relation's manager holds the other model's rows",
        """
        from shop.models import Folder

        def archive(folder_id):
            folder = Folder.objects.get(pk=folder_id)
            folder.documents.filter(state="draft").update(state="archived")
            for doc in folder.documents.using("default").select_related("folder"):
                doc.announce()
        """,
        "archive",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE, K.HTTP_POST},
        '`folder = models.ForeignKey(Folder, related_name="documents")` on `Document` makes '
        "`folder.documents` a manager of `Document` rows (`document_set` without a "
        'related_name; a field to `"self"` on an abstract base holds rows of the concrete '
        "class): `folder.documents.filter(...).update(...)` is a queryset update of "
        "documents, and the rows of `.using(...)`, `.select_related(...)`, `.filter(...)` are "
        "`Document` instances, so `doc.announce()` is followed (its POST is found). The "
        "field may be in another module: the index joins them.",
        more_files={
            "shop/models.py": (
                "import requests\n"
                "from django.db import models\n\n"
                "class Folder(models.Model):\n"
                "    name = models.CharField(max_length=40)\n\n"
                "class Document(models.Model):\n"
                "    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name='documents')\n"
                "    state = models.CharField(max_length=20)\n\n"
                "    def announce(self):\n"
                "        requests.post('https://hooks.example.com/doc', json={'id': self.pk})\n"
            )
        },
    ),
    example(
        "types: a FileField holds a FieldFile, whose delete() removes the stored file",
        """
        from django.db.models.signals import post_delete
        from django.dispatch import receiver

        from shop.models import Invoice

        @receiver(post_delete, sender=Invoice)
        def drop_pdf(sender, instance, **kwargs):
            if instance.pdf:
                instance.pdf.delete(save=False)
        """,
        "drop_pdf",
        V.IDEMPOTENT,
        {K.DB_DELETE},
        "`pdf = models.FileField(...)` on `Invoice` holds Django's `FieldFile` "
        "(`ImageField`: `ImageFieldFile`), so `instance.pdf.delete()` is "
        "`FieldFile.delete`: the stored file is removed, and a retry finds nothing left, even "
        "in a project where some class defines a `delete` of its own (which a `delete` on a "
        "receiver of unknown type might run). `instance.pdf.save(name, content)` stores the "
        "content under a free name: a retry stores another copy (`file_append`).",
        more_files={
            "shop/models.py": (
                "from django.db import models\n\n"
                "class Invoice(models.Model):\n"
                "    pdf = models.FileField(upload_to='invoices/')\n\n"
                "class Outbox:\n"
                "    def delete(self, key):\n"
                "        import requests\n"
                "        requests.post('https://example.com/forget', json={'key': key})\n"
            )
        },
    ),
    example(
        "types: a receiver that reads the instance from **kwargs",
        """
        from django.db.models.signals import post_delete

        from shop.models import Membership

        def drop_group(sender, **kwargs):
            membership = kwargs["instance"]
            group = membership.group
            if group is not None:
                group.delete()

        post_delete.connect(drop_group, sender=Membership)
        """,
        "drop_group",
        V.IDEMPOTENT,
        {K.DB_DELETE},
        "Django calls a receiver with its arguments by keyword and asks every receiver to "
        'take `**kwargs`, so many read the instance as `kwargs["instance"]` or '
        '`kwargs.get("instance")`, often through a local. That is the sender\'s model '
        "whichever way it is read, as the `instance` parameter is: `membership.group` is the "
        "`Group` its ForeignKey names, and `group.delete()` is a model's delete (a retry "
        "finds nothing left), even in a project where another class's `delete` mails. "
        'Another key (`kwargs["using"]`), and the `**kwargs` of a function that is no '
        "receiver, stay of unknown type.",
        more_files={
            "shop/models.py": (
                "import smtplib\n"
                "from django.db import models\n\n"
                "class Group(models.Model):\n"
                "    name = models.CharField(max_length=40)\n\n"
                "class Membership(models.Model):\n"
                "    group = models.ForeignKey(Group, null=True, on_delete=models.SET_NULL)\n\n"
                "class Mailbox:\n"
                "    def delete(self):\n"
                "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'x')\n"
            )
        },
    ),
    example(
        "types: a queryset kept in a local is its model's rows",
        """
        from django.db.models import F

        from shop.models import Coupon

        def expire(today):
            stale = Coupon.objects.filter(valid_until__lt=today)
            stale = stale.exclude(state="expired")
            stale.update(state="expired")
            for coupon in stale:
                coupon.notify_owner()

        def count_use(code):
            used = Coupon.objects.filter(code=code)
            used.update(uses=F("uses") + 1)
        """,
        "expire",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE, K.HTTP_POST},
        "`stale = Coupon.objects.filter(...)` (and `stale.exclude(...)`, `.all()`, "
        "`.order_by(...)`: Django's methods that return a queryset) holds `Coupon` rows: "
        "`stale.update(state=...)` is `Coupon.objects.update` (an overwrite: a retry writes "
        "the same values), `stale.delete()` a delete, and `for coupon in stale` gives "
        "`Coupon` instances, so `coupon.notify_owner()` is followed to its POST (which a "
        'retry repeats: the verdict). `used.update(uses=F("uses") + 1)` in `count_use` is '
        "still an increment.",
        more_files={
            "shop/models.py": (
                "import requests\n"
                "from django.db import models\n\n"
                "class Coupon(models.Model):\n"
                "    code = models.CharField(max_length=20)\n"
                "    state = models.CharField(max_length=20)\n"
                "    uses = models.IntegerField(default=0)\n"
                "    valid_until = models.DateField()\n\n"
                "    def notify_owner(self):\n"
                "        requests.post('https://hooks.example.com/coupon', json={'id': self.pk})\n"
            )
        },
    ),
    example(
        "types: a many-to-many field's manager, and relation edits that converge",
        """
        from django.db.models.signals import post_save
        from django.dispatch import receiver

        from shop.models import Label, Ticket

        @receiver(post_save, sender=Ticket)
        def label_new_ticket(sender, instance, created, **kwargs):
            triage, _ = Label.objects.get_or_create(name="triage")
            instance.labels.add(triage)
            instance.watchers.remove(*instance.watchers.filter(active=False))

        def relabel(ticket_id, names):
            ticket = Ticket.objects.get(pk=ticket_id)
            ticket.labels.set(Label.objects.filter(name__in=names))
            for label in ticket.labels.all():
                label.touch()
        """,
        "label_new_ticket",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_UPSERT, K.DB_DELETE},
        "`labels = models.ManyToManyField(Label)` on `Ticket` makes `ticket.labels` a manager "
        "of `Label` rows (a field to `\"self\"`: the class's own rows; a base's field counts): "
        "`.filter(...)`, `.all()` and the rest are `Label.objects` queries, and its rows are "
        "`Label` instances (`label.touch()` is followed). Django's relation edits converge, so "
        "a retry repeats nothing: `add()` of a pair already related adds nothing (Django "
        'documents that it "will not duplicate the relation"), `remove()` and `clear()` find '
        "nothing left to remove, `set()` makes the relation exactly the objects given; the "
        "same holds for a reverse ForeignKey's manager (`folder.documents.add(doc)` sets the "
        "key). The evidence names them `RelatedManager.add` and so on (Django makes those "
        "classes at run time). A receiver's `instance` is the sender's model, so "
        "`instance.labels.add(...)` is this edit too. `create()` on such a manager inserts "
        "a row, as `Label.objects.create` does.",
        more_files={
            "shop/models.py": (
                "from django.db import models\n\n"
                "class Label(models.Model):\n"
                "    name = models.CharField(max_length=40, unique=True)\n\n"
                "    def touch(self):\n"
                "        Label.objects.filter(pk=self.pk).update(name=self.name)\n\n"
                "class Person(models.Model):\n"
                "    active = models.BooleanField(default=True)\n\n"
                "class Ticket(models.Model):\n"
                "    labels = models.ManyToManyField(Label)\n"
                "    watchers = models.ManyToManyField(Person, related_name='watched')\n"
            )
        },
    ),
    example(
        "types: a value that is one of several classes (`a or b`, `a if c else b`)",
        """
        from shop.models import Entry

        def entry_path(entry_id):
            entry = Entry.objects.get(pk=entry_id)
            return entry.path()
        """,
        "entry_path",
        V.IDEMPOTENT,
        {K.DB_READ},
        "`parent = self.section or self.site` with `section` and `site` foreign keys to "
        '`Section` and `Site` (a class, or a string `"shop.Site"`: the project model of that '
        "name) makes `parent` a `Section` or a `Site` (`None` operands are dropped, at most 4 "
        "classes): `parent.path()` runs `Section.path` or `Site.path`, and both are followed, "
        "each as for a single type. The call is explained only when every member's method is: "
        "with an operand of unknown type it stays a gap, and what any member does is an effect "
        "of the call (a POST in `Board.path` makes `self.section if c else self.board` post).",
        more_files={
            "shop/models.py": (
                "import requests\n"
                "from django.db import models\n\n"
                "class Section(models.Model):\n"
                "    slug = models.SlugField()\n\n"
                "    def path(self):\n"
                "        return (self.slug,)\n\n"
                "class Site(models.Model):\n"
                "    slug = models.SlugField()\n\n"
                "    def path(self):\n"
                "        return ('site', self.slug)\n\n"
                "class Entry(models.Model):\n"
                "    section = models.ForeignKey(Section, null=True, on_delete=models.SET_NULL)\n"
                "    site = models.ForeignKey('shop.Site', on_delete=models.CASCADE)\n"
                "    slug = models.SlugField()\n\n"
                "    def path(self):\n"
                "        parent = self.section or self.site\n"
                "        return (*parent.path(), self.slug)\n"
            )
        },
    ),
    example(
        "types: what an HTTP client's request returns",
        """
        import httpx
        import requests

        def refresh_rates(base):
            r = requests.get("https://rates.example.com/latest", params={"base": base})
            r.raise_for_status()
            with httpx.Client(timeout=5) as client:
                extra = client.get("https://rates.example.com/extra")
                extra.raise_for_status()
            return r.json(), extra.json()
        """,
        "refresh_rates",
        V.IDEMPOTENT,
        {K.HTTP_GET},
        "Each client's API reference says what a request returns: `requests.get` and a "
        "`Session`'s methods a `requests.Response`; httpx's functions, `Client` and "
        "`AsyncClient` methods an `httpx.Response`; a `ClientSession` request in aiohttp "
        "(awaited or `async with ... as resp`) a `ClientResponse`; urllib3's `request` a "
        "`BaseHTTPResponse`. The response's methods (`raise_for_status`, `json`, `text`, "
        "`read`, `close`) read what came back: the GET is the only effect.",
    ),
    example(
        "types: a Pillow image and the copies its methods return",
        """
        from PIL import Image

        def make_thumbnail(path, out):
            image = Image.open(path)
            image = image.convert("RGB").rotate(90)
            image.thumbnail((256, 256))
            image.save(out, "JPEG")
        """,
        "make_thumbnail",
        V.IDEMPOTENT,
        {K.IMAGE_PROCESS, K.FILE_WRITE},
        "`Image.open` gives an `Image`; `convert`, `rotate`, `crop`, `copy`... return a new "
        'one (Pillow\'s reference: "Returns a converted copy of this image"), in memory. '
        "`thumbnail` processes it and `save` overwrites the file: a retry writes the same file.",
    ),
    example(
        "types: what a session's execute returns, on a session handed in",
        """
        from sqlalchemy import exists, func, select

        from shop.models import Block

        async def count_blocks(session, owner_id):
            found = await session.execute(select(exists().where(Block.owner_id == owner_id)))
            if not found.scalar():
                return 0
            rows = (await session.execute(select(Block.id))).scalars().all()
            total = await session.execute(select(func.count(Block.id)))
            return max(len(rows), total.scalar() or 0)
        """,
        "count_blocks",
        V.IDEMPOTENT,
        {K.DB_READ},
        "`session` here is a parameter no caller types: the scan reads `session.execute(...)` "
        "by its name, as a database session's. What it returns is then what SQLAlchemy's "
        "`Session.execute` returns, a `Result`, whether kept in a local (`found.scalar()`) or "
        "read at once (`(await session.execute(q)).scalars().all()`): its methods read rows "
        "already selected. A parameter the callers or an annotation type is read as that "
        "class's result. When the local was made by calls on different receivers, its type "
        "stays unknown.",
        more_files={"shop/models.py": _BLOCKS},
    ),
    example(
        "types: an item of the tuple a helper returns",
        """
        from sqlalchemy import select
        from sqlalchemy.orm import Session

        from shop.models import Block

        def _filtered(owner_id, labels):
            conditions = [f"owner={owner_id}"]
            if not labels:
                return None, conditions
            query = select(Block).where(Block.owner_id == owner_id)
            query = query.where(Block.label.in_(labels))
            return query, conditions

        def list_blocks(session: Session, owner_id, labels):
            query, conditions = _filtered(owner_id, labels)
            if query is None:
                return [], conditions
            return session.execute(query).scalars().all(), conditions
        """,
        "list_blocks",
        V.IDEMPOTENT,
        {K.DB_READ},
        "A helper of the same file whose every `return` is a tuple of one length "
        "(`return query, conditions`, `return None, conditions`): `query, conditions = "
        "_filtered(...)` binds each name to what that position holds, read as a single "
        "return's value is (here a `select()` narrowed by `.where()`, or `None`). So "
        "`session.execute(query)` reads. Returns of different lengths, a starred target "
        "(`query, *rest = ...`) or a position whose values disagree leave the names untyped.",
        more_files={"shop/models.py": _BLOCKS},
    ),
    example(
        "types: a generic class in an annotation",
        """
        from typing import Generic, TypeVar

        import requests

        T = TypeVar("T")

        class Flow(Generic[T]):
            def __init__(self, flow_id: str, result: T) -> None:
                self.flow_id = flow_id
                self.result = result

            def abort(self) -> None:
                requests.post("https://flows.example/abort", json={"id": self.flow_id})

        class Manager:
            def __init__(self) -> None:
                self._progress: dict[str, Flow[dict]] = {}

            def abort_flow(self, flow_id: str) -> None:
                flow = self._progress.pop(flow_id, None)
                if flow is not None:
                    flow.abort()

        def abort_all(manager: Manager, ids: list[str]):
            for flow_id in ids:
                manager.abort_flow(flow_id)
        """,
        "abort_all",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "`Flow[dict]` in an annotation is a `Flow` (PEP 484: a generic class subscripted "
        "by its parameters), here the values of a dict kept on `self`: `flow.abort()` runs "
        "`Flow.abort`. typing's own forms (`List[...]`, `Type[...]`, `Callable[...]`), "
        "builtin containers and Django's `QuerySet[...]` keep their own readings.",
    ),
    example(
        "types: a SQLAlchemy statement built by a helper of another module",
        """
        from sqlalchemy import update

        from shop.db import SessionLocal
        from shop.models import Order
        from shop.queries import open_orders, visible_to

        def close_open_orders(customer_id):
            with SessionLocal() as session:
                query = open_orders(customer_id)
                query = visible_to(query, customer_id)
                query = query.order_by(Order.id)
                orders = session.scalars(query).all()
                stmt = update(Order).where(Order.customer_id == customer_id)
                stmt = stmt.values(closed=True)
                session.execute(stmt)
                session.commit()
                return len(orders)
        """,
        "close_open_orders",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE},
        "`session.execute(stmt)` / `session.scalars(query)` do what the statement is: built by "
        "`select()` it reads, `insert()` inserts, `update()` overwrites, `delete()` deletes, "
        "`insert().on_conflict_do_update()` upserts. The scan follows the statement through "
        "SQLAlchemy's generative methods (`.where()`, `.values()`, `.order_by()`...) and "
        "re-assignments (`q = q.where(...)`) in the job, and into a helper of another module "
        "that returns one: by its annotation (`-> Select`), or because every `return` builds "
        "one (`query = select(Order).where(...)`, `query = query.where(...)`, `return query`). "
        "A statement handed in from elsewhere stays one gap at the session's API.",
        more_files={
            "shop/db.py": (
                "from sqlalchemy import create_engine\n"
                "from sqlalchemy.orm import sessionmaker\n\n"
                "SessionLocal = sessionmaker(create_engine('postgresql://h/shop'))\n"
            ),
            "shop/models.py": (
                "from sqlalchemy import Boolean, Column, Integer\n"
                "from sqlalchemy.orm import DeclarativeBase\n\n"
                "class Base(DeclarativeBase):\n    pass\n\n"
                "class Order(Base):\n"
                "    __tablename__ = 'orders'\n"
                "    id = Column(Integer, primary_key=True)\n"
                "    customer_id = Column(Integer)\n"
                "    hidden = Column(Boolean)\n"
                "    closed = Column(Boolean)\n"
            ),
            "shop/queries.py": (
                "from typing import TYPE_CHECKING\n\n"
                "from sqlalchemy import select\n\n"
                "from shop.models import Order\n\n"
                "if TYPE_CHECKING:\n    from sqlalchemy import Select\n\n"
                "def open_orders(customer_id):\n"
                "    query = select(Order).where(Order.customer_id == customer_id)\n"
                "    query = query.where(Order.closed.is_(False))\n"
                "    return query\n\n"
                "def visible_to(query: 'Select', customer_id) -> 'Select':\n"
                "    return query.where(Order.hidden.is_(False))\n"
            ),
        },
    ),
    example(
        "types: timers and callback handles a job cancels",
        """
        import asyncio
        import threading

        class Poller:
            async def start(self):
                loop = asyncio.get_running_loop()
                self._next = loop.call_later(30, self.poll)
                self._timer = threading.Timer(30, self.poll)

            def poll(self):
                pass

        def stop(poller: Poller):
            poller._next.cancel()
            poller._timer.cancel()
        """,
        "stop",
        V.IDEMPOTENT,
        set(),
        "`loop.call_later()` and `call_at()` return an `asyncio.TimerHandle`, `call_soon()` an "
        "`asyncio.Handle` (asyncio's event loop docs), whose `cancel()` stops a callback that "
        "has not run (a second cancel does nothing); `threading.Timer.cancel()` stops a "
        "waiting timer. An attribute set from a call on a local the method typed "
        "(`loop = asyncio.get_running_loop()`) has that call's type. On an object of "
        "unknown type a `cancel()` stays a gap: it may be a project's (an order's).",
    ),
    example(
        "types: an attribute inherited from a library class",
        """
        from shop.db import db

        def restock(item):
            db.session.add(item)
            db.session.flush()
        """,
        "restock",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT, K.DB_OVERWRITE},
        "`class AppDB(SQLAlchemy)` extends Flask-SQLAlchemy's class, whose `session` the scan "
        "knows is SQLAlchemy's `Session`: `db = AppDB()` has it too, so `db.session.add(...)` "
        "inserts a row (a retry inserts another) and `flush()` writes pending changes. A "
        "project class on the way that defines `session` itself is read as written.",
        more_files={
            "shop/db.py": (
                "from flask_sqlalchemy import SQLAlchemy\n\n"
                "class AppDB(SQLAlchemy):\n"
                "    def init_app(self, app):\n"
                "        super().init_app(app)\n\n"
                "db = AppDB()\n"
            )
        },
    ),
    example(
        "types: an alias of a builtin container",
        """
        from shop.types import Config

        def feature_enabled(config: Config, name):
            flags = config.get("flags", {})
            return flags.get(name, False)
        """,
        "feature_enabled",
        V.IDEMPOTENT,
        set(),
        "`Config = dict[str, Any]` (also `Mapping[...]`, `list[...]`, `set[...]` and their "
        "typing names) at module level is a type alias of the container: `config.get(...)` "
        "on a parameter annotated `Config` is `dict.get`, not a method of an unknown "
        '`Config`. A subscript that is no type (`HOOKS["default"]`) is not taken for one.',
        more_files={
            "shop/types.py": "from typing import Any\n\nConfig = dict[str, Any]\n",
        },
    ),
    example(
        "types: a project FileField subclass holds its value class",
        """
        from shop.models import Scan

        def drop(scan_id):
            scan = Scan.objects.get(pk=scan_id)
            scan.original.delete(save=False)
            scan.mirrored.delete(save=False)
        """,
        "drop",
        V.NON_IDEMPOTENT,
        {K.DB_READ, K.DB_DELETE, K.HTTP_POST},
        "A model attribute made by a project subclass of Django's `FileField` holds the "
        "field's value class on the instance: its `attr_class` when the subclass sets one "
        "(`MirroredFile`, whose `delete` also posts: followed), else Django's `FieldFile` "
        "(`ImageField`: `ImageFieldFile`), whose `delete()` removes the stored file. An "
        "`attr_class` the scan cannot name (picked at import time) types nothing.",
        more_files={
            "shop/models.py": (
                "import requests\n"
                "from django.db import models\n"
                "from django.db.models.fields.files import FieldFile\n\n"
                "class MirroredFile(FieldFile):\n"
                "    def delete(self, save=True):\n"
                "        super().delete(save=save)\n"
                "        requests.post('https://mirror.example.com/forget', json={'name': self.name})\n\n"
                "class StoredFileField(models.FileField):\n"
                "    pass\n\n"
                "class MirroredFileField(models.FileField):\n"
                "    attr_class = MirroredFile\n\n"
                "class Scan(models.Model):\n"
                "    original = StoredFileField(upload_to='scans/')\n"
                "    mirrored = MirroredFileField(upload_to='mirror/')\n"
            )
        },
    ),
    example(
        "types: an unannotated parameter is of the class every project call hands it",
        """
        from shop.coupons import expire
        from shop.models import Coupon

        def close_coupon(coupon_id):
            coupon = Coupon.objects.get(pk=coupon_id)
            expire(coupon)
        """,
        "close_coupon",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE},
        "`def expire(coupon): coupon.retire()` names no type, but every call of `expire` in "
        "the project hands it a `Coupon` (here a row `Coupon.objects.get` loaded; also a "
        "constructor, an annotated or typed local, `self` in a `Coupon` method, or a caller's "
        "own parameter typed the same way, through up to 4 helpers): `coupon.retire()` is "
        "`Coupon.retire`, followed. A method that keeps such a parameter as an attribute "
        "(`self.coupon = coupon` in `__init__`) types `self.coupon` the same way, unless the "
        "attribute is also set from another parameter. A site that starts the function (`Thread(target=expire, "
        "args=(coupon,))`) counts as a call with the site's arguments. The parameter stays "
        "untyped, and its calls gaps, when one call hands another class or a value the scan "
        "cannot type, spreads `*args`/`**kwargs`, or when something else runs the function: "
        "a request handler, a signal receiver, a decorated function, or one handed on as a "
        "value (`map(expire, rows)`, `Thread(target=...)` with arguments the scan cannot "
        "read). Like a type checker's inference from call sites, this trusts that the "
        "project's calls are all the calls: a library whose users call `expire` with "
        "something else should annotate the parameter.",
        more_files={
            "shop/coupons.py": "def expire(coupon):\n    coupon.retire()\n",
            "shop/models.py": (
                "import requests\n"
                "from django.db import models\n\n"
                "class Coupon(models.Model):\n"
                "    state = models.CharField(max_length=20)\n\n"
                "    def retire(self):\n"
                "        Coupon.objects.filter(pk=self.pk).update(state='expired')\n\n"
                "class Voucher(models.Model):\n"
                "    def retire(self):\n"
                "        requests.post('https://hooks.example.com/voucher', json={'id': self.pk})\n"
            ),
        },
    ),
    RuleExample(
        title="types: what a receiver is handed: a model signal's instance, and its helpers",
        files={
            "shop/__init__.py": "",
            "shop/signals.py": "from django.dispatch import Signal\n\norder_shipped = Signal()\n",
            "shop/models.py": _TRACKED,
            "shop/carrier.py": """
                import requests

                def sync(order):
                    requests.put(order.tracking_url(), json={"state": "saved"})
            """,
            "shop/receivers.py": """
                from django.db.models.signals import post_save
                from django.dispatch import receiver

                from shop.carrier import sync
                from shop.models import Order

                @receiver(post_save, sender=Order)
                def on_saved(sender, instance, **kwargs):
                    sync(instance)
            """,
        },
        job="shop.receivers.on_saved",
        expected_verdict=V.IDEMPOTENT,
        expected_effect_kinds={K.HTTP_PUT},
        why="A receiver connected with `sender=Order` is handed the saved `Order` as "
        '`instance` (read as `kwargs["instance"]` too). Handed on (`sync(instance)`), it '
        "types the helper's parameter as a caller's own typed parameter does: "
        "`order.tracking_url()` is `Order.tracking_url`, which builds a string, and the PUT "
        "converges. Without it `tracking_url` would be a method of an unknown receiver, and "
        "`Parcel.tracking_url` posts: the verdict would be `unknown`. A helper another caller "
        "hands another class stays untyped.",
    ),
    RuleExample(
        title="types: a receiver of the project's own signal is handed what its sends pass",
        files={
            "shop/__init__.py": "",
            "shop/signals.py": """
                from django.dispatch import Signal

                order_shipped = Signal()
            """,
            "shop/models.py": _TRACKED,
            "shop/receivers.py": """
                import requests
                from django.dispatch import receiver

                from shop.signals import order_shipped

                @receiver(order_shipped)
                def notify_carrier(sender, order, **kwargs):
                    requests.put(order.tracking_url(), json={"state": "shipped"})
            """,
        },
        job="shop.receivers.notify_carrier",
        expected_verdict=V.IDEMPOTENT,
        expected_effect_kinds={K.HTTP_PUT},
        why="Django's `Signal.send(sender, **named)` (and blinker's `send`) calls every "
        "receiver with the keywords the send passes. Where every send of the project's own "
        "signal that runs the receiver passes `order=` a value of one class (here `self` in "
        '`Order.ship`), the receiver\'s `order` (or its `kwargs["order"]`) is that class. '
        "Nothing is typed when sends disagree or leave the keyword out, when the receiver "
        "also hears a signal the project never sends (another package's, or a model signal "
        "Django sends for every save, even one also sent by hand), or for `sender`.",
    ),
    RuleExample(
        title="types: a generic view's get_object() is a row of its model",
        files={
            "shop/__init__.py": "",
            "shop/models.py": _TRACKED,
            "shop/signals.py": "from django.dispatch import Signal\n\norder_shipped = Signal()\n",
            "shop/views.py": """
                import requests
                from django.http import HttpResponse
                from django.views.generic import DetailView

                from shop.models import Order

                class TrackOrder(DetailView):
                    model = Order

                    def post(self, request, *args, **kwargs):
                        order = self.get_object()
                        requests.put(order.tracking_url(), json={"state": "asked"})
                        return HttpResponse("ok")
            """,
            "shop/urls.py": """
                from django.urls import path

                from shop.views import TrackOrder

                urlpatterns = [path("orders/<int:pk>/track", TrackOrder.as_view())]
            """,
        },
        job="shop.views.TrackOrder.post",
        expected_verdict=V.IDEMPOTENT,
        expected_effect_kinds={K.DB_READ, K.HTTP_PUT},
        why="Django's `SingleObjectMixin.get_object()` (`DetailView`, `UpdateView`, "
        '`DeleteView`) "returns the single object that this view will display", a row of '
        "`get_queryset()`: `queryset`, else `model._default_manager.all()`; DRF's "
        "`GenericAPIView.get_object()` (its generic views and viewsets) reads `queryset`. So "
        "in a view that does not override it, `self.get_object()` is an instance of the "
        "`model` (or `queryset = X.objects...`'s `X`) the view or a project base declares: "
        "`order.tracking_url()` is `Order.tracking_url`; the library's `get_object` itself is a "
        "read of one row. An overridden `get_queryset` is trusted to return rows of that "
        "model, as the frameworks assume (an `UpdateView` builds its form from `model`, DRF "
        "reads `queryset.model`). A view that is no generic view (a plain `View`, DRF's "
        "`ViewSet`) is not typed by a `model` attribute.",
    ),
    example(
        "types: regular expressions, patterns and matches",
        """
        import re

        SKU = re.compile(r"[^A-Z0-9]+")

        def normalise_sku(raw):
            found = re.match(r"([A-Z]+)-", raw)
            prefix = found.group(1) if found else ""
            digits = re.compile(r"[0-9]+").search(raw)
            return SKU.sub("", raw.upper()), prefix, digits.end() if digits else 0
        """,
        "normalise_sku",
        V.IDEMPOTENT,
        set(),
        "As the `re` module documents them: `re.compile` returns a `re.Pattern`, and "
        "`re.match`/`search`/`fullmatch` (and a Pattern's methods of those names) return a "
        "`re.Match` or None. So a pattern compiled at module level (`SKU.sub`), a local one, "
        "and a match's `group`/`end` are methods of those classes, which the catalogue's "
        "`re.*` entry calls pure: no gap. A project object with a `sub` method stays its own.",
    ),
    example(
        "types: what an annotated attribute holds, and the element next() or min() picks",
        """
        from shop.catalog import Manifest

        def install_first(manifest: Manifest, name):
            for repo in manifest.repos:
                repo.check()
            found = next((r for r in manifest.repos if r.name == name), None)
            if found:
                found.install()
        """,
        "install_first",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "A class of another module annotates `repos: list[Repo]` (a dataclass field, a "
        "pydantic field, `self.repos: list[Repo]`), so `manifest.repos` iterated, indexed "
        "(`manifest.repos[0]`) or looked up (`by_name.get(k)` on a `dict[str, Repo]`) gives a "
        "`Repo`, and so does `next(...)`, `min`/`max(..., key=...)` and `random.choice` over "
        "it, as a type checker reads them: `Repo.install` is followed. A mapping iterates its "
        "keys, not its values; a value of a library object's attribute (`request.app[key]`) "
        "keeps its method's name (`?.m`).",
        more_files={
            "shop/catalog.py": """
                import dataclasses

                import requests

                class Repo:
                    name: str

                    def check(self):
                        return self.name

                    def install(self):
                        requests.post("https://hooks.example.com/install", json={"n": self.name})

                @dataclasses.dataclass
                class Manifest:
                    repos: list[Repo]
            """,
        },
    ),
    example(
        "types: -> Self, return cls(...), and a tuple's items, in another module",
        """
        from shop.catalog import Repo, Quiet, lookup

        def refresh(name):
            Repo.load(name).install()
            Quiet.load(name).install()
            index, repo = lookup(name)
            repo.install()
        """,
        "refresh",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "A classmethod annotated `-> Self` (PEP 673) or returning `cls(...)`, and a method "
        "returning `self`, give an instance of the class they are called on: "
        "`Repo.load(name).install()` runs `Repo.install`, `Quiet.load(name)` is a `Quiet` whose "
        "own `install` runs. A function annotated `-> tuple[Index, Repo]` (or returning a "
        "tuple) types each name it is unpacked into, awaited too.",
        more_files={
            "shop/catalog.py": """
                from typing import Self

                import requests

                class Repo:
                    @classmethod
                    def load(cls, name) -> Self:
                        return cls()

                    def install(self):
                        requests.post("https://hooks.example.com/install")

                class Quiet(Repo):
                    def install(self):
                        return None

                class Index:
                    pass

                def lookup(name) -> tuple[Index, Repo]:
                    return Index(), Repo()
            """,
        },
    ),
    example(
        "types: a SQLAlchemy relationship's collection",
        """
        from shop.models import Agent

        def publish_sources(agent: Agent):
            return [source.publish() for source in agent.sources]
        """,
        "publish_sources",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "SQLAlchemy 2 declares a one-to-many relationship as `sources: Mapped[list[Source]] = "
        "relationship()`: iterating `agent.sources` gives `Source` rows, so `source.publish()` "
        "runs `Source.publish`.",
        more_files={
            "shop/models.py": """
                import requests
                from sqlalchemy.orm import DeclarativeBase, Mapped, relationship

                class Base(DeclarativeBase):
                    pass

                class Source(Base):
                    __tablename__ = "sources"

                    def publish(self):
                        requests.post("https://hooks.example.com/sources")

                class Agent(Base):
                    __tablename__ = "agents"
                    sources: Mapped[list["Source"]] = relationship()
            """,
        },
    ),
]
