"""Idempotent jobs, and jobs whose effects are only known at run time."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

EXAMPLES: list[RuleExample] = [
    example(
        "idempotent: an upsert by a natural key",
        """
        import requests
        from shop.models import Profile

        def sync_profile(user_id):
            data = requests.get(f"https://crm.example.com/users/{user_id}").json()
            Profile.objects.update_or_create(user_id=user_id, defaults=data)
        """,
        "sync_profile",
        V.IDEMPOTENT,
        {K.HTTP_GET, K.DB_UPSERT},
        "A GET and an upsert converge to the same state however often they run.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Profile(models.Model):\n    pass\n"
        },
    ),
    example(
        "idempotent: a file overwritten at a path derived from the inputs",
        """
        def export(report_id):
            with open(f"/srv/reports/{report_id}.txt", "w") as out:
                out.write("done")
        """,
        "export",
        V.IDEMPOTENT,
        {K.FILE_WRITE},
        "Mode 'w' replaces the file; mode 'a' would append on every retry.",
    ),
    example(
        "idempotent: no effect at all (medium confidence)",
        """
        def compute(n):
            return sum(range(n))
        """,
        "compute",
        V.IDEMPOTENT,
        set(),
        "Nothing found in the reachable code; confidence is not high because absence is weaker evidence.",
    ),
    example(
        "idempotent: an in-memory counter is noted, not counted",
        """
        import requests

        STATS = {}

        def refresh(feed_id):
            requests.get(f"https://feeds.example.com/{feed_id}")
            STATS[feed_id] = STATS.get(feed_id, 0)
            STATS[feed_id] += 1
        """,
        "refresh",
        V.IDEMPOTENT,
        {K.HTTP_GET},
        "Module state is not persisted, so a retry changes nothing durable; the evidence still "
        "says that a worker process would update its own copy of `STATS`.",
        evidence_mentions="in-memory state",
    ),
    example(
        "idempotent: a timestamp written by an overwrite",
        """
        from django.utils import timezone
        from shop.models import Ticket

        def touch(ticket_id):
            ticket = Ticket.objects.get(pk=ticket_id)
            ticket.modified = timezone.now()
            ticket.save()
        """,
        "touch",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE, K.RANDOM_ID},
        "A retry leaves the same row with a slightly later time: it converges. A time or random "
        "value only matters when it names a new row, file or object.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Ticket(models.Model):\n    pass\n"
        },
    ),
    example(
        "idempotent: a random back-off between attempts is stored nowhere",
        """
        import random
        import time

        from django.db import OperationalError
        from shop.models import Ticket

        def close(ticket_id):
            for attempt in range(3):
                try:
                    Ticket.objects.filter(pk=ticket_id).update(status="closed")
                    return
                except OperationalError:
                    time.sleep(0.5 * 2**attempt + random.random())
        """,
        "close",
        V.IDEMPOTENT,
        {K.DB_READ, K.DB_OVERWRITE, K.SLEEP, K.RANDOM_ID},
        "A random value written inside a sleep's arguments is the back-off's jitter: it decides "
        "when the next attempt runs and is stored nowhere, so the write beside it is judged on "
        "its own. Bound to a name first (`delay = ...; time.sleep(delay)`), it still counts as "
        "stored: the scan does not follow the name.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Ticket(models.Model):\n    pass\n"
        },
    ),
    example(
        "idempotent: super().hook() runs the base's empty hook, not a sibling's override",
        """
        from django.core.cache import cache
        from shop.models import AuditEntry

        class AfterSync:
            def done(self, user_id):
                pass

        class MarkSynced(AfterSync):
            def done(self, user_id):
                super().done(user_id)
                cache.set(f"synced:{user_id}", True)

        class Audit(AfterSync):
            def done(self, user_id):
                AuditEntry.objects.create(user_id=user_id)

        def mark_synced(user_id):
            MarkSynced().done(user_id)
        """,
        "mark_synced",
        V.IDEMPOTENT,
        {K.CACHE_SET},
        "A call of an empty method may run any of its overrides (the receiver may be a "
        "subclass), but `super().done()` names the base's own method: the sibling `Audit` "
        "and its insert are not reached. The same holds for `__init__`: `Base()` and "
        "`super().__init__()` run that class's own constructor, never a subclass's.",
        more_files={
            "shop/models.py": (
                "from django.db import models\n\nclass AuditEntry(models.Model):\n    pass\n"
            )
        },
    ),
    example(
        "idempotent: super().clean() runs the base's hook even when many classes override it",
        """
        from django.core.cache import cache
        from shop.models import AuditEntry

        class Form:
            def clean(self):
                return self.data

        class ProfileForm(Form):
            def clean(self):
                data = super().clean()
                cache.set("profile", data)
                return data

        class AuditForm(Form):
            def clean(self):
                AuditEntry.objects.create(data=self.data)

        class NameForm(Form):
            def clean(self):
                return {"name": self.data}

        class CityForm(Form):
            def clean(self):
                return {"city": self.data}

        class ZipForm(Form):
            def clean(self):
                return {"zip": self.data}

        class MailForm(Form):
            def clean(self):
                return {"mail": self.data}

        class PhoneForm(Form):
            def clean(self):
                return {"phone": self.data}

        def save_profile(user_id):
            form = ProfileForm()
            form.data = user_id
            form.clean()
        """,
        "save_profile",
        V.IDEMPOTENT,
        {K.CACHE_SET},
        "A hook with no body of its own that many classes override (a form's `clean`, a "
        "plugin's method) is a gap when called: which override runs is only known at run "
        "time. Called through `super()`, it is not: `super().clean()` in `ProfileForm` runs "
        "`Form.clean` itself, so neither that gap nor `AuditForm`'s insert is reached. A "
        "project class that puts another override after `ProfileForm` in its order "
        "(cooperative `super()`) keeps the gap.",
        more_files={
            "shop/models.py": (
                "from django.db import models\n\nclass AuditEntry(models.Model):\n    pass\n"
            )
        },
    ),
    example(
        "unknown: a guessed call is followed one level, never through a further guess",
        """
        import stripe

        from shop.lookups import courier_for, route_for

        class Route:
            def ship(self, order_id):
                courier = courier_for(order_id)
                courier.collect(order_id)

        class Courier:
            def collect(self, order_id):
                stripe.Charge.create(amount=500, currency="eur")

        def ship_order(order_id):
            route = route_for(order_id)
            route.ship(order_id)
        """,
        "ship_order",
        V.UNKNOWN,
        set(),
        "`route.ship()` is on a receiver of unknown type: the one project `ship` may run, and "
        "what it does is kept as a possibility (a gap). Inside it, `courier.collect()` is a "
        "second guess: followed, guesses chain through a big project and reach half of it, "
        "so it is cut to a gap of its own. The charge two guesses away is not reported as "
        "`unsafe`, and the job is never `idempotent`: it stays `unknown`. A charge one guess "
        "away stays an effect.",
        evidence_mentions="unresolved calls",
    ),
    example(
        "unknown: an empty hook with more overrides than are followed",
        """
        class Plugin:
            def on_paid(self, order_id):
                pass

        class Plugin0(Plugin):
            def on_paid(self, order_id):
                return order_id

        class Plugin1(Plugin):
            def on_paid(self, order_id):
                return order_id

        class Plugin2(Plugin):
            def on_paid(self, order_id):
                return order_id

        class Plugin3(Plugin):
            def on_paid(self, order_id):
                return order_id

        class Plugin4(Plugin):
            def on_paid(self, order_id):
                return order_id

        class Plugin5(Plugin):
            def on_paid(self, order_id):
                return order_id

        class Plugin6(Plugin):
            def on_paid(self, order_id):
                return order_id

        def announce(plugin: Plugin, order_id):
            plugin.on_paid(order_id)
        """,
        "announce",
        V.UNKNOWN,
        set(),
        "A call of an empty method runs one of its overrides; up to six are followed (each "
        "is a callee, and the verdict takes the worst). Seven or more make a plugin registry whose configured "
        "member is only known at run time: the call is a gap of its own, even when the "
        "overrides read look harmless (those past the bound are not read). The same bound "
        "holds for a method name guessed over a family of classes.",
        evidence_mentions="shop.jobs.Plugin.on_paid",
    ),
    example(
        "unknown: dynamic dispatch",
        """
        import requests

        HANDLERS = {}

        def route(kind):
            requests.get("https://example.com/ping")
            HANDLERS[kind](kind)
        """,
        "route",
        V.UNKNOWN,
        {K.HTTP_GET, K.DYNAMIC_CALL},
        "The callee of `HANDLERS[kind](...)` is only known at run time: we say what is missing.",
    ),
]
