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
