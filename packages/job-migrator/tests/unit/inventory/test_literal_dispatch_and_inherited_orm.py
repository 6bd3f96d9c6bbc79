"""Literal imports and logger getattr are not dynamic dispatch; library-inherited ORM methods
and catalogued constructors are explained (catalogue gaps of issue 10)."""

from __future__ import annotations

import textwrap

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import EffectKind, Idempotency, Job
from inventory.rule_examples._base import starter
from inventory.summary import FactKind


def dispatch_targets(source: str) -> list[str]:
    summary = extract_source(textwrap.dedent(source), "app/x.py", "app.x")
    return [
        fact.target
        for function in summary.functions
        for fact in function.facts
        if fact.kind == FactKind.DYNAMIC_DISPATCH
    ]


def test_import_module_is_not_dynamic_whatever_the_name() -> None:
    # Importing calls nothing of the job's (a module's body runs once per process); what is
    # called on the module is a call of its own, a gap when the name is computed.
    found = dispatch_targets(
        """
        import importlib
        from importlib import import_module

        def load(name):
            import_module("sentry_sdk")
            importlib.import_module(".backends", package="app")
            __import__("json")
            import_module(name)
            importlib.import_module(f"app.{name}")
            __import__(name)
            eval(name)
        """
    )
    assert found == ["builtins.eval"]


def test_getattr_on_a_logger_is_not_dynamic() -> None:
    found = dispatch_targets(
        """
        import logging
        from app.log import LOGGER

        logger = logging.getLogger(__name__)
        log: logging.Logger = logging.getLogger("x")

        class Worker:
            def __init__(self):
                self.logger = logging.getLogger("w")

            def go(self, level):
                getattr(self.logger, level)("m")

        def emit(level, handler, client):
            getattr(logger, level)("m")
            getattr(log, level)("m")
            getattr(LOGGER, level)("m")
            getattr(logging, level)("m")
            write = getattr(logger, level)
            write("m")
            getattr(handler, level)("m")
            getattr(client, "post")("m")
            fn = getattr(client, level)
            fn("m")
        """
    )
    assert found == ["getattr", "getattr", "variable fn"]


def test_a_local_named_logger_of_another_type_stays_dynamic() -> None:
    found = dispatch_targets(
        """
        def emit(level, make):
            logger = make()
            getattr(logger, level)("m")
        """
    )
    assert found == ["parameter make", "getattr"]


def scan(files: dict[str, str], job: str) -> Job:
    sources = {
        "shop/__init__.py": "",
        "shop/views.py": starter("shop.jobs", job),
        **files,
    }
    summaries = []
    for path, source in sources.items():
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(
            extract_source(
                textwrap.dedent(source).lstrip(), path, module, path.endswith("__init__.py")
            )
        )
    _, jobs = classify(summaries, MigratorConfig(), Catalogue.load())
    return next(j for j in jobs if j.qualname == f"shop.jobs.{job}")


# A stand-in for Django's model base whose constructor the scan can read, as it reads the
# installed Django: signals, defaults and setattr nothing explains on their own.
_BASE = """
from app_signals import pre_init

class Model:
    def __init__(self, *args, **kwargs):
        pre_init.send(sender=self.__class__, args=args, kwargs=kwargs)
        for field in self._meta.concrete_fields:
            setattr(self, field.attname, field.get_default())
"""


def test_building_a_model_instance_is_explained_but_saving_is_not_hidden() -> None:
    files = {
        "django/__init__.py": "",
        "django/db/__init__.py": "",
        "django/db/models/__init__.py": _BASE,
        "shop/models.py": ("from django.db import models\n\nclass Stat(models.Model):\n    pass\n"),
        "shop/jobs.py": (
            "from shop.models import Stat\n\n"
            "def build(scope):\n"
            "    return Stat(scope=scope)\n\n"
            "def build_and_save(scope):\n"
            "    Stat(scope=scope).save()\n"
        ),
    }
    built = scan(files, "build")
    assert built.idempotency == Idempotency.IDEMPOTENT, [e.message for e in built.evidence]
    saved = scan(files, "build_and_save")
    assert saved.idempotency == Idempotency.NON_IDEMPOTENT, [e.message for e in saved.evidence]
    assert {e.kind for e in saved.effects} == {EffectKind.DB_INSERT}


_MANAGER = """
from django.db import models

class EventQuerySet(models.QuerySet):
    def close_all(self):
        return self.update(open=False)

class EventManager(models.Manager):
    def add(self, name):
        return self.create(name=name)

    def rename(self, events):
        self.bulk_update(events, ["name"])

class Event(models.Model):
    objects = EventManager()
"""


def test_methods_a_project_manager_inherits_from_django_are_catalogued() -> None:
    files = {
        "shop/models.py": _MANAGER,
        "shop/jobs.py": (
            "from shop.models import Event, EventQuerySet\n\n"
            "def add(name):\n"
            "    Event.objects.add(name)\n\n"
            "def rename(events):\n"
            "    Event.objects.rename(events)\n\n"
            "def close(qs: EventQuerySet):\n"
            "    qs.close_all()\n"
        ),
    }
    added = scan(files, "add")
    assert added.idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.api for e in added.effects] == ["django.db.models.Manager.create"]
    renamed = scan(files, "rename")
    assert renamed.idempotency == Idempotency.IDEMPOTENT, [e.message for e in renamed.evidence]
    assert {e.kind for e in renamed.effects} == {EffectKind.DB_OVERWRITE}
    closed = scan(files, "close")
    assert {e.kind for e in closed.effects} == {EffectKind.DB_OVERWRITE}


def test_a_project_method_is_never_replaced_by_the_library_name() -> None:
    files = {
        "shop/models.py": (
            "import requests\n"
            "from django.db import models\n\n"
            "class LoudManager(models.Manager):\n"
            "    def create(self, **kw):\n"
            "        requests.post('https://hooks.example.com/created', json=kw)\n\n"
            "    def add(self, name):\n"
            "        return self.create(name=name)\n"
        ),
        "shop/jobs.py": (
            "from shop.models import LoudManager\n\ndef add(name):\n    LoudManager().add(name)\n"
        ),
    }
    job = scan(files, "add")
    assert EffectKind.HTTP_POST in {e.kind for e in job.effects}


def test_create_in_a_models_manager_gets_the_unique_key_guard() -> None:
    files = {
        "shop/models.py": (
            "from django.db import models\n\n"
            "class ErrorManager(models.Manager):\n"
            "    def record(self, name, message):\n"
            "        self.create(name=name, message=message)\n\n"
            "class Error(models.Model):\n"
            "    name = models.CharField(unique=True, max_length=10)\n"
            "    objects = ErrorManager()\n"
        ),
        "shop/jobs.py": (
            "from shop.models import Error\n\ndef record(name):\n    Error.objects.record(name, 'x')\n"
        ),
    }
    job = scan(files, "record")
    assert job.idempotency == Idempotency.NEEDS_KEY, [e.message for e in job.evidence]


def test_update_on_a_tree_queryset_overwrites() -> None:
    files = {
        "shop/jobs.py": (
            "def publish_subtree(node):\n"
            "    node.get_descendants(include_self=True).update(is_public=True)\n"
        ),
    }
    job = scan(files, "publish_subtree")
    # ``get_descendants`` itself stays a gap (a method of a receiver of unknown type).
    assert {e.kind for e in job.effects} == {EffectKind.DB_OVERWRITE}


def test_tree_reads_a_node_model_inherits_are_catalogued() -> None:
    files = {
        "shop/models.py": (
            "from treebeard.mp_tree import MP_Node\n\n"
            "class Category(MP_Node):\n"
            "    def get_descendants_and_self(self):\n"
            "        return self.get_tree(self)\n\n"
            "    def hide_subtree(self):\n"
            "        self.get_descendants_and_self().update(is_public=False)\n"
            "        self.refresh_from_db()\n"
        ),
        "shop/jobs.py": (
            "from shop.models import Category\n\n"
            "def hide(category: Category):\n"
            "    category.hide_subtree()\n"
        ),
    }
    job = scan(files, "hide")
    assert job.idempotency == Idempotency.IDEMPOTENT, [e.message for e in job.evidence]
    assert {e.kind for e in job.effects} == {EffectKind.DB_READ, EffectKind.DB_OVERWRITE}
