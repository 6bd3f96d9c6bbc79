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
        {K.FILE_WRITE},
        "Moving overwrites the destination, removing a file converges and setting a cookie "
        "on a response overwrites it: `[[pure]]` and `[[effect]]` "
        "entries explain them, so none is a gap.",
    ),
]
