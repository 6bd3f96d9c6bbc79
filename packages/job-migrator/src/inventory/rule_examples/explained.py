"""Calls explained without reading their source: dispatch tables, names that decide, and
library methods the catalogue speaks for (the soundness rule's other half)."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

EXAMPLES: list[RuleExample] = [
    example(
        "explained: a call through a module-level table of functions",
        """
        from django.core.cache import cache

        def _page_keys():
            return ["menu", "nav"]

        def _site_keys():
            return ["sites"]

        KEYS = {"page": _page_keys, "site": _site_keys}

        def clear_keys(kind):
            cache.delete_many(KEYS[kind]())
        """,
        "clear_keys",
        V.IDEMPOTENT,
        {K.CACHE_DELETE},
        "`KEYS[kind]()` runs one of the table's values, all project functions: each is "
        "followed like a call. A table the module adds to (`KEYS[k] = f`, `KEYS.update(...)`) "
        "is a registry, whose entries are only known at run time.",
    ),
    example(
        "unknown: a call through a table that is also a registry",
        """
        def _page():
            return 1

        HANDLERS = {"page": _page}

        def register(name, fn):
            HANDLERS[name] = fn

        def run_handler(kind):
            HANDLERS[kind]()
        """,
        "run_handler",
        V.UNKNOWN,
        {K.DYNAMIC_CALL},
        "`register` adds to the table: a plugin can put anything in it.",
    ),
    example(
        "explained: deleting through a receiver of unknown type",
        """
        from shop.models import Coupon

        def drop_coupon(coupon_id):
            coupon = Coupon.objects.filter(id=coupon_id).first()
            if coupon is not None:
                coupon.delete()
        """,
        "drop_coupon",
        V.IDEMPOTENT,
        {K.DB_DELETE, K.DB_READ},
        "`?.delete` is a catalogue entry decided by the method's name: whatever the receiver "
        "(a model, a queryset, a session), a retry finds nothing left to delete. The name "
        "decides only while no project class defines `delete`.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Coupon(models.Model):\n    pass\n"
        },
    ),
    example(
        "unknown: deleting when a project class overrides delete",
        """
        def drop(item):
            item.delete()
        """,
        "drop",
        V.UNKNOWN,
        set(),
        "`shop.trash.Trash.delete` sends a notification; `item` could be a Trash, so the name "
        "`delete` no longer says the call converges: it is a gap, and a gap is never idempotent.",
        more_files={
            "shop/trash.py": (
                "import requests\n\n"
                "class Trash:\n"
                "    def delete(self):\n"
                "        requests.post('https://hooks.example.com/deleted')\n"
            )
        },
        evidence_mentions="unresolved calls",
    ),
    example(
        "explained: stdlib file moves and deletes, cookies on a response",
        """
        import os
        import shutil

        def tidy(path, target, response):
            if os.path.exists(path):
                shutil.move(path, target)
            os.remove(target + ".tmp")
            response.set_cookie("seen", "1")
        """,
        "tidy",
        V.IDEMPOTENT,
        {K.FILE_WRITE, K.FILE_DELETE},
        "Moving overwrites the destination (`file_write`), removing a file converges "
        "(`file_delete`: a second run finds nothing left) and setting a cookie on a response "
        "overwrites it: `[[pure]]` and `[[effect]]` entries explain them, so none is a gap. "
        "Writes and deletions are work on this machine's disk, which `migrator plan` and "
        "`apply` say of a job that moves.",
    ),
    example(
        "explained: a literal import_module and a logger method picked by name",
        """
        import logging
        from importlib import import_module

        logger = logging.getLogger(__name__)

        def report_failure(level, message):
            sentry = import_module("sentry_sdk")
            sentry.capture_message(message)
            getattr(logger, level)("job failed: %s", message)
            log = getattr(logger, level)
            log("reported: %s", message)
        """,
        "report_failure",
        V.IDEMPOTENT,
        set(),
        "`import_module` of a string literal imports a known module: not dynamic dispatch, and "
        "calls on the result are calls of that module (`sentry_sdk.capture_message`, an error "
        "report). `getattr(logger, level)` on a `logging` logger (from `logging.getLogger`, "
        "annotated `Logger`, or a module-level or `self.` name `logger` / `log`) picks one of "
        "its methods, all of which only log. Any other receiver keeps `getattr(x, name)()` "
        "dynamic.",
    ),
    example(
        "unknown: a function of a module imported by a computed name",
        """
        from importlib import import_module

        def run_plugin(name, payload):
            import_module(f"shop.plugins.{name}").run(payload)
        """,
        "run_plugin",
        V.UNKNOWN,
        set(),
        "Importing is not the job's effect: a module's body runs once per process, the first "
        "time its name is imported (later imports get it from `sys.modules`, as a retry's "
        "would), like the imports at start-up; so `import_module(name)` is no gap. The module's "
        "`run` is: its name is only known at run time, so the call stays unresolved.",
        evidence_mentions="unresolved calls",
    ),
    example(
        "explained: a module imported by a computed name, read but not called",
        """
        from importlib import import_module

        def plugin_version(path):
            module = import_module(path)
            return module.VERSION
        """,
        "plugin_version",
        V.IDEMPOTENT,
        set(),
        "`import_module(path)` with a computed name imports a module and reads an attribute: "
        "nothing is called on it, so nothing is left unexplained (Django's `import_string` "
        "is the same import followed by `getattr`).",
    ),
    example(
        "explained: looking up a model's ContentType",
        """
        from django.contrib.contenttypes.models import ContentType

        from shop.models import Link, Page

        def relink(link_id):
            page_type = ContentType.objects.get_for_model(Page)
            link = Link.objects.get(pk=link_id)
            if link.content_type == page_type:
                Page.objects.filter(id=link.object_id).update(title="linked")
        """,
        "relink",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE, K.DB_UPSERT},
        "`ContentType.objects.get_for_model(...)` (and `get_for_models`) returns the content "
        "type's row, creating it when it is missing: a get-or-create on its unique "
        "`(app_label, model)`, so a retry finds it (`db_upsert`); `get_for_id` and "
        "`get_by_natural_key` read. Django's manager does this in its own source through "
        "`self.get_or_create`, which the scan would otherwise leave as a gap on a receiver of "
        "unknown type; the entries speak for the documented API.",
        more_files={
            "shop/models.py": (
                "from django.contrib.contenttypes.models import ContentType\n"
                "from django.db import models\n\n"
                "class Page(models.Model):\n"
                "    title = models.CharField(max_length=40)\n\n"
                "class Link(models.Model):\n"
                "    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)\n"
                "    object_id = models.PositiveIntegerField()\n"
            )
        },
    ),
    example(
        "explained: Django's connection housekeeping in a long-running job",
        """
        from django.db import close_old_connections, connections

        def sync_feeds(name):
            for conn in connections.all(initialized_only=True):
                conn.close_if_unusable_or_obsolete()
            close_old_connections()
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT 1")
        """,
        "sync_feeds",
        V.IDEMPOTENT,
        {K.DB_READ},
        "What Django runs around every request (`django.db.close_old_connections`, each "
        "connection's `close_if_unusable_or_obsolete()`, `connections.close_all()`) closes a "
        "connection that is broken or past `CONN_MAX_AGE`; the next query opens another. "
        "Threads and long jobs call it themselves: `[[pure]]` entries, nothing a retry repeats.",
    ),
    example(
        "explained: management-command colour styles",
        """
        import logging

        from django.core.management import color_style

        logger = logging.getLogger(__name__)

        def announce_reload(name):
            styles = color_style()
            logger.info(styles.NOTICE(f"reloading {name}"))
            logger.info(color_style().SUCCESS("done"))
        """,
        "announce_reload",
        V.IDEMPOTENT,
        set(),
        "`django.core.management.color` styles (`self.style.NOTICE`, `color_style().ERROR`, "
        "`styles.SUCCESS`) only wrap text in terminal colours: `[[pure]]` entries on a "
        "receiver named `style` / `styles` or the result of `color_style()`.",
    ),
    RuleExample(
        title="a library callable as the job: partial(default_storage.delete, name)",
        files={
            "shop/__init__.py": "",
            "shop/models.py": """
            from functools import partial

            from django.core.files.storage import default_storage
            from django.db import models, transaction


            class Poster(models.Model):
                image = models.CharField(max_length=200)

                def replace_image(self, new_name):
                    old_name, self.image = self.image, new_name
                    self.save()
                    transaction.on_commit(partial(default_storage.delete, old_name))
            """,
        },
        job="django.core.files.storage.default_storage.delete",
        expected_verdict=V.IDEMPOTENT,
        expected_effect_kinds={K.DB_DELETE},
        why="The site runs a library callable, no project function: it is classified as a "
        "one-line job calling it (the catalogue, or the library's source when installed, says "
        "what it does), named by its dotted name. Django's `Storage.delete` converges (a "
        "missing file is no error); `Storage.save` stores under a new free name each time "
        "(`get_available_name`), so a retry stores a second file; `exists`, `url`, `open` for "
        "reading are reads. The job has no location and its evidence says *no project "
        "function to move: wrap it in one*: `migrator apply` refuses the site with that "
        "reason. A lambda (`lambda: list(self.fetch())`) is not such a site: the callable "
        "wraps project calls.",
        evidence_mentions="no project function to move: wrap it in one",
    ),
    example(
        "explained: building a SQLAlchemy query on a mapped class",
        """
        from sqlalchemy import and_, select

        from shop.models import Registration

        def pending_query(emails):
            crit = and_(Registration.email.in_(emails), Registration.paid_dt.is_(None))
            return select(Registration).where(crit).order_by(Registration.created_dt.desc())
        """,
        "pending_query",
        V.IDEMPOTENT,
        set(),
        "`Registration` is mapped (its base is a declarative base; `db.Model` or `Column(...)` "
        "attributes say so too): `Registration.email.in_(...)`, `.is_()`, `.desc()` are "
        "SQLAlchemy column operators that build an expression, and `and_` / `select` build "
        "statements. Nothing touches a database until a session executes one.",
        more_files={
            "shop/models.py": (
                "from sqlalchemy import Column, DateTime, String\n"
                "from sqlalchemy.orm import DeclarativeBase\n\n"
                "class Base(DeclarativeBase):\n    pass\n\n"
                "class Registration(Base):\n"
                "    __tablename__ = 'registrations'\n"
                "    email = Column(String)\n"
                "    paid_dt = Column(DateTime)\n"
                "    created_dt = Column(DateTime)\n"
            )
        },
    ),
    example(
        "unknown: the same method names on a class that is not mapped",
        """
        from shop.models import Settings

        def has_flag(name):
            return Settings.flags.contains(name)
        """,
        "has_flag",
        V.UNKNOWN,
        set(),
        "`Settings` has no mapping base and declares no columns: what `Settings.flags` holds, "
        'and what its `contains` does, is not known, so the call stays a gap ("unresolved calls").',
        evidence_mentions="Settings.flags.contains",
        more_files={"shop/models.py": "class Settings:\n    flags = None\n"},
    ),
]
