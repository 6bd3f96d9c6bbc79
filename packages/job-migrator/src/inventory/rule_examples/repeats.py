"""Effects that repeat on retry: non_idempotent, or needs_key when a key is evident."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

EXAMPLES: list[RuleExample] = [
    example(
        "non_idempotent: a notification, with a suggested dedup key",
        """
        from django.core.mail import send_mail

        def send_welcome(user_id):
            send_mail("Welcome", "Hello", "shop@example.com", ["u@example.com"])
        """,
        "send_welcome",
        V.NON_IDEMPOTENT,
        {K.EMAIL_SEND},
        "A retry sends a second email; a dedup key like `shop.jobs.send_welcome:{user_id}` is suggested.",
        evidence_mentions="notification fast track",
    ),
    example(
        "notification fast track: the suggested key is made for each call",
        """
        from django.core.mail import send_mail

        def notify(order_id, template, customer_id):
            send_mail(template, "Your order", "shop@example.com", ["c@example.com"])
        """,
        "notify",
        V.NON_IDEMPOTENT,
        {K.EMAIL_SEND},
        "Only a mail repeats on a retry: the job is on the fast track (`fast_track`, phase 2 of the plan) "
        "and its suggested key is `shop.jobs.notify:{+}`: a fresh id made at each call and "
        "stored with its job, so a redelivery or retry of that call never sends twice, and two "
        "requests (even with equal arguments: the same user asking twice) never share a key.",
        evidence_mentions="shop.jobs.notify:{+}",
    ),
    example(
        "needs_key: an insert whose only risk is a duplicate, with a natural key",
        """
        from shop.models import Delivery

        def record_delivery(order_id, delivery_key):
            Delivery.objects.create(order_id=order_id, delivery_key=delivery_key)
        """,
        "record_delivery",
        V.NEEDS_KEY,
        {K.DB_INSERT},
        "`delivery_key` comes from the inputs and names the event: a unique constraint or "
        "`get_or_create` on it makes a retry harmless. Foreign keys such as `order_id` do not count.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Delivery(models.Model):\n    pass\n"
        },
    ),
    example(
        "non_idempotent: an increment through F()",
        """
        from django.db.models import F
        from shop.models import Post

        def count_view(post_id):
            Post.objects.filter(pk=post_id).update(views=F("views") + 1)
        """,
        "count_view",
        V.NON_IDEMPOTENT,
        {K.DB_INCREMENT, K.DB_READ},
        "`F('views') + 1` adds one per run.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Post(models.Model):\n    pass\n"
        },
    ),
    example(
        "non_idempotent: a raw SQL INSERT",
        """
        def audit(conn, event_id):
            cursor = conn.cursor()
            cursor.execute("INSERT INTO audit (event) VALUES (%s)", [event_id])
        """,
        "audit",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "SQL text is classified: a plain INSERT adds a row per run (INSERT ... ON CONFLICT would be an upsert).",
    ),
    example(
        "non_idempotent: save() on a new instance inserts a row",
        """
        from shop.models import Comment

        def thank(order_id):
            comment = Comment(text="thanks", order_id=order_id)
            comment.save()
        """,
        "thank",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "The instance is built in the job without a primary key, so `save()` is an INSERT: a "
        "retry adds a second row. `Comment(pk=..., ...)` or a fetched instance would be an "
        "overwrite.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Comment(models.Model):\n    pass\n"
        },
        evidence_mentions="a retry inserts another",
    ),
    example(
        "non_idempotent: save() on an instance built and saved in one expression",
        """
        from shop.models import Comment

        def thank(order_id):
            Comment(
                text="thanks", order_id=order_id
            ).save()
        """,
        "thank",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "`Model(...).save()` is the same INSERT as through a name, written on one line or, as "
        "a formatter spreads a long call, on several (the catalogue's receiver hints read the "
        "receiver on one line).",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Comment(models.Model):\n    pass\n"
        },
        evidence_mentions="a retry inserts another",
    ),
    example(
        "non_idempotent: a new instance built from a dict literal of its fields",
        """
        from shop.models import Comment

        def thank(order_id):
            fields = {"text": "thanks", "order_id": order_id}
            comment = Comment(**fields)
            comment.save()
        """,
        "thank",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "`Model(**fields)` may carry a primary key, unless `fields` is a dict literal of the "
        'function whose keys (and any `fields["..."] = ...` set later) name none: then the '
        "save is an INSERT. `Model(**data)` of a parameter stays a possible UPDATE.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Comment(models.Model):\n    pass\n"
        },
        evidence_mentions="a retry inserts another",
    ),
    example(
        "idempotent: a fetched row saved beside a new instance of its class",
        """
        from django.utils import timezone

        from shop.models import Session

        def touch(key, ip):
            session, created = Session.objects.get_or_create(key=key, defaults={"ip": ip})
            if not created:
                before = Session(key=session.key, ip=session.ip)
                session.ip = ip
                session.seen_at = timezone.now()
                session.save()
                return before
        """,
        "touch",
        V.IDEMPOTENT,
        {K.DB_UPSERT, K.DB_OVERWRITE, K.RANDOM_ID},
        "Only the instance a constructor made is saved as an INSERT: `session` is the row "
        "`get_or_create` loaded, so its `save()` overwrites it, whatever other `Session(...)` "
        "the job builds (here an unsaved copy of the old values, as django-allauth's "
        "`UserSessionManager.create_from_request` does).",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Session(models.Model):\n    pass\n"
        },
        evidence_mentions="overwrites a row",
    ),
    example(
        "non_idempotent: a known insert wins over a dynamic call",
        """
        from shop.models import Visit

        HOOKS = {}

        def record(page_id, kind):
            Visit.objects.create(page_id=page_id)
            HOOKS[kind](page_id)
        """,
        "record",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT, K.DYNAMIC_CALL},
        "The insert repeats on a retry whatever the hook does: the dynamic call cannot make the "
        "job safe, only worse, so it is evidence (and low confidence), not the verdict.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Visit(models.Model):\n    pass\n"
        },
        evidence_mentions="effects hidden behind HOOKS[kind](page_id)",
    ),
    example(
        "unknown: SQL text from a parameter",
        """
        from django.db import connection

        def run_sql(sql, params=()):
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
        """,
        "run_sql",
        V.UNKNOWN,
        {K.DYNAMIC_CALL},
        "What `execute(sql)` does depends on the caller's SQL: not a read by default. A caller "
        'that passes a literal (`run_sql("INSERT ...")`) gets that literal\'s effect.',
        evidence_mentions="SQL text comes from parameter 'sql'",
    ),
    RuleExample(
        title="non_idempotent: += on a field of a model instance",
        files={
            "shop/__init__.py": "",
            "shop/models.py": (
                "from django.db import models\n\n"
                "class Post(models.Model):\n"
                "    def bump(self):\n"
                "        self.views += 1\n"
            ),
            "shop/views.py": (
                "import threading\nfrom shop.models import Post\n\n"
                "def view(request):\n"
                "    post = Post()\n"
                "    threading.Thread(target=post.bump).start()\n"
            ),
        },
        job="shop.models.Post.bump",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.DB_INCREMENT},
        why="A model field is persisted when the instance is saved (here or by the caller): "
        "`+=` then makes a retry add twice. In the same function, `+=` then `save()` is "
        "reported on the save.",
    ),
    example(
        "non_idempotent: a field set to F() arithmetic, then saved",
        """
        from django.db import models
        from shop.models import Post

        def unlike(post_id):
            post = Post.objects.get(pk=post_id)
            post.likes = models.F("likes") - 1
            post.save(update_fields=["likes"])
        """,
        "unlike",
        V.NON_IDEMPOTENT,
        {K.DB_INCREMENT, K.DB_READ},
        "The database computes `F('likes') - 1` from the row when the save runs, so a retry "
        "subtracts again: an increment, not an overwrite. A bare `post.likes = F('other')` (a "
        "copy of a column) stays an overwrite.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Post(models.Model):\n    pass\n"
        },
    ),
    example(
        "idempotent: enqueueing a task whose own work is idempotent",
        """
        from shop.tasks import refresh_stats

        def after_edit(page_id):
            refresh_stats.delay(page_id)
        """,
        "after_edit",
        V.IDEMPOTENT,
        {K.ENQUEUE},
        "A retry enqueues the task again and it runs twice; `refresh_stats` only overwrites a "
        "row, so two runs end where one does and the enqueue repeats nothing that matters. "
        "Tasks that enqueue each other (a task enqueueing itself for a parent row) are decided "
        "together. A task that sends, inserts or is `unknown` keeps the enqueue a repeat.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Page(models.Model):\n    pass\n",
            "shop/tasks.py": (
                "from celery import shared_task\n"
                "from shop.models import Page\n\n"
                "@shared_task\n"
                "def refresh_stats(page_id):\n"
                "    Page.objects.filter(pk=page_id).update(views=0)\n"
            ),
        },
        evidence_mentions="enqueues shop.tasks.refresh_stats, whose own work is idempotent",
    ),
    example(
        "non_idempotent: enqueueing a task that mails",
        """
        from shop.tasks import notify

        def after_order(order_id):
            notify.delay(order_id)
        """,
        "after_order",
        V.NON_IDEMPOTENT,
        {K.ENQUEUE},
        "A retry enqueues `notify` again, and `notify` sends a mail: a duplicate enqueue "
        "sends it twice.",
        more_files={
            "shop/tasks.py": (
                "from celery import shared_task\n"
                "from django.core.mail import send_mail\n\n"
                "@shared_task\n"
                "def notify(order_id):\n"
                "    send_mail('Paid', 'Thanks', 'shop@example.com', ['c@example.com'])\n"
            ),
        },
        evidence_mentions="a retry repeats enqueue",
    ),
    example(
        "needs_key: an enqueue behind a cache.add claim",
        """
        from django.core.cache import cache
        from shop.models import Task

        def schedule(key, task_id):
            if cache.add(key, task_id, 60):
                Task.objects.create(task_id=task_id)
        """,
        "schedule",
        V.NEEDS_KEY,
        {K.DB_INSERT, K.CACHE_SET},  # the claim sets its key
        "A repeat finds the claim and skips, but a claim expires and two runs can race: the "
        "dedup guard makes the job safe only conditionally, so it needs a key.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Task(models.Model):\n    pass\n"
        },
        evidence_mentions="dedup guard (cache.add claim)",
    ),
    example(
        "needs_key: check-then-create on the same model",
        """
        from shop.models import StockAlert

        def raise_alert(record_id):
            open_alert = StockAlert.objects.filter(record_id=record_id, status="open").first()
            if open_alert is None:
                StockAlert.objects.create(record_id=record_id, status="open")
        """,
        "raise_alert",
        V.NEEDS_KEY,
        {K.DB_INSERT, K.DB_READ},
        "The insert only happens when the check finds no row of that model: safe on a sequential "
        "repeat, racy under concurrency without a unique constraint.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass StockAlert(models.Model):\n    pass\n"
        },
        evidence_mentions="checks for an existing StockAlert first",
    ),
    example(
        "needs_key: an insert on a unique key taken from the inputs",
        """
        from shop.models import Preferences

        def create_preferences(sender, instance, created, **kwargs):
            if created:
                Preferences.objects.create(user=instance, theme="light")
        """,
        "create_preferences",
        V.NEEDS_KEY,
        {K.DB_INSERT},
        "`Preferences.user` is a OneToOneField, so a repeat with the same `instance` is refused "
        "by the database instead of adding a row. The same holds for a `unique=True` or primary-key "
        "field, `unique_together` and an unconditional `UniqueConstraint`, when every field of "
        "the key is a parameter or a literal; a value minted in the job (`uuid4()`) is not.",
        more_files={
            "shop/models.py": "from django.conf import settings\nfrom django.db import models\n\n"
            "class Preferences(models.Model):\n"
            "    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)\n"
            "    theme = models.CharField(max_length=10)\n"
        },
        evidence_mentions="the unique user of Preferences refuses a second row",
    ),
    example(
        "needs_key: a function named as deduplicating (enqueue_once) that checks first",
        """
        from shop.models import Job

        def sync(source_id):
            enqueue_once(source_id)

        def enqueue_once(source_id):
            pending = Job.objects.filter(source_id=source_id, status="pending").first()
            if pending:
                return pending
            return enqueue(source_id)

        def enqueue(source_id):
            return Job.objects.create(source_id=source_id, status="pending")
        """,
        "sync",
        V.NEEDS_KEY,
        {K.DB_INSERT, K.DB_READ},
        "`*_once`, `*_unique`, `*_if_not_exists` functions that read before they act are dedup "
        "guards for what they call after the read, here an insert two calls down.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Job(models.Model):\n    pass\n"
        },
    ),
    example(
        "non_idempotent: an append to an in-memory collector that ships later",
        """
        from shop.telemetry import collector

        def record_upload(session_id):
            collector.add({"session": session_id})
        """,
        "record_upload",
        V.NON_IDEMPOTENT,
        {K.CACHE_INCR, K.PROCESS_STATE},
        "`collector` is a module-level instance: what its methods append to `self._events` "
        "outlives the job and is flushed later, so a retry ships another event. The same holds "
        "for `PENDING.append(x)` on a module-level list; a local list dies with the job. It is "
        "also state of this process (`process_state`): a worker would append to its own "
        "collector.",
        more_files={
            "shop/telemetry.py": (
                "class Collector:\n"
                "    def __init__(self):\n"
                "        self._events = []\n\n"
                "    def add(self, event):\n"
                "        self._events.append(event)\n\n\n"
                "collector = Collector()\n"
            )
        },
    ),
    example(
        "needs_key: a stored callback behind a dedup guard",
        """
        from django.core.cache import cache

        def run_hook_once(name, callback):
            if cache.add(f"hook:{name}", 1, timeout=3600):
                callback(name)
        """,
        "run_hook_once",
        V.NEEDS_KEY,
        {K.DYNAMIC_CALL, K.CACHE_SET},  # the claim sets its key
        "What `callback` does is only known at run time, but a repeat never reaches it while the "
        "`cache.add` claim holds; the claim can expire, so the job needs a key. A check-then-create "
        "(`filter().exists()` then `create`) covers inserts of its model only, not a callback.",
    ),
    example(
        "needs_key: a time value that goes only into a unique key deduplicated by the insert",
        """
        from shop.models import Visit

        def open_visit_day(shop_id):
            Visit.objects.open_day(shop_id, kind=1)
        """,
        "open_visit_day",
        V.NEEDS_KEY,
        {K.DB_INSERT, K.RANDOM_ID},
        "`today = timezone.now().date()` is stored, but only through "
        "`bulk_create(..., ignore_conflicts=True)` whose instances give every field of "
        "`unique_together` (shop, kind, day): a repeat the same day is skipped by the "
        "database, so the time value is covered by that dedup guard and does not make the job "
        "`non_idempotent`. A retry on a later day does not collide (the evidence says so), hence "
        "`needs_key`. A `uuid4()` in the key never collides: that stays `non_idempotent`.",
        more_files={
            "shop/models.py": """
            import datetime

            from django.db import models
            from django.utils import timezone


            class VisitQuerySet(models.QuerySet):
                pass


            class VisitManager(models.Manager):
                def open_day(self, shop_id, kind):
                    today = timezone.now().date()
                    self.bulk_create(
                        [Visit(shop=shop_id, kind=kind, hits=0, day=today)],
                        ignore_conflicts=True,
                    )


            class Visit(models.Model):
                shop = models.IntegerField()
                kind = models.IntegerField()
                hits = models.IntegerField()
                day = models.DateField(default=datetime.date.today)
                objects = VisitManager.from_queryset(VisitQuerySet)()

                class Meta:
                    unique_together = (("shop", "kind", "day"),)
            """
        },
        evidence_mentions="day holds a time value",
    ),
    example(
        "non_idempotent: a uuid4 in the unique key never collides",
        """
        import uuid

        from shop.models import Invitation

        def issue_invitation(customer_id):
            Invitation.objects.create(code=str(uuid.uuid4()), customer_id=customer_id)
        """,
        "issue_invitation",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT, K.RANDOM_ID},
        "`Invitation.code` is `unique=True`, but a value minted per run never collides: a retry "
        "inserts a second invitation under a new code. No dedup guard.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Invitation(models.Model):\n"
            "    code = models.CharField(max_length=40, unique=True)\n"
            "    customer_id = models.IntegerField()\n"
        },
    ),
    example(
        "needs_key: a create on a unique field, whatever the value's origin",
        """
        from shop.models import Warning

        def record_warnings():
            Warning.objects.sync()
        """,
        "record_warnings",
        V.NEEDS_KEY,
        {K.DB_INSERT},
        "`self.create(code=code)` in the manager of `Warning`, whose `code` field is "
        "`unique=True`: `code` comes from a loop over a literal set, not from the inputs, "
        "but a repeat gives the same values, so the database refuses the second row instead of "
        "inserting a duplicate. Only the model's own unique field options count "
        "(`unique=True`, `unique_together`, `UniqueConstraint(fields=...)`), never a guess by "
        "name; a body that mints random values (`uuid4`, `secrets`, `make_token()`) a local "
        "could hold gets no guard.",
        more_files={
            "shop/models.py": """
            from django.db import models


            class WarningManager(models.Manager):
                def sync(self):
                    for code in {"disk", "memory"}:
                        self.create(code=code, text="check " + code)


            class Warning(models.Model):
                code = models.CharField(max_length=20, unique=True)
                text = models.TextField()
                objects = WarningManager()
            """
        },
        evidence_mentions="the unique code of Warning refuses a second row",
    ),
]
