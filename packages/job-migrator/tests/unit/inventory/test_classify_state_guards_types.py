"""Money state, dedup guards and types that survive, on small reproductions of real shapes."""

from __future__ import annotations

import textwrap

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import EffectKind, Idempotency, Job
from inventory.summary import FactKind

K = EffectKind
V = Idempotency
MODELS = """
from django.db import models

class Alert(models.Model):
    pass

class Job(models.Model):
    pass

class Search(models.Model):
    pass
"""
STARTER = """
import threading
from app.jobs import {name}

def view(request):
    threading.Thread(target={name}, args=(1,)).start()
"""


def jobs_of(job_source: str, *names: str, **more: str) -> dict[str, Job]:
    files = {
        "app/__init__.py": "",
        "app/models.py": MODELS,
        "app/jobs.py": job_source,
        **{f"app/{k}.py": v for k, v in more.items()},
    }
    files |= {f"app/views_{n}.py": STARTER.format(name=n) for n in names}
    summaries = []
    for path, text in files.items():
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(
            extract_source(textwrap.dedent(text), path, module, path.endswith("__init__.py"))
        )
    _, jobs = classify(summaries, MigratorConfig(), Catalogue.load())
    return {job.qualname.rsplit(".", 1)[-1]: job for job in jobs}


def kinds(job: Job) -> set[EffectKind]:
    return {e.kind for e in job.effects}


def test_subscript_read_modify_write_is_a_fact_and_a_plain_store_is_not() -> None:
    summary = extract_source(
        textwrap.dedent(
            """
            def f(d, k, v, obj):
                d[k] = d.get(k, 0) + v
                d[k] = v + d[k]
                d[k] = v + 1
                obj.spend = 0.0
                obj.name = "x"
            """
        ),
        "x.py",
        "app",
    )
    found = [(f.kind, f.target) for f in summary.functions[0].facts]
    assert found == [
        (FactKind.AUGASSIGN_SUBSCRIPT, "d[k]"),
        (FactKind.AUGASSIGN_SUBSCRIPT, "d[k]"),
        (FactKind.STATE_ASSIGN, "obj.spend"),
    ]


def test_money_accumulators_columns_and_fields_are_unsafe_and_counters_are_not() -> None:
    jobs = jobs_of(
        """
        from django.db.models import F
        from app.models import Search

        TOTALS = {}

        def spend(user_id, response_cost):
            TOTALS[user_id] = response_cost + TOTALS.get(user_id, 0)

        def views(key):
            TOTALS[key] = TOTALS.get(key, 0) + 1

        def column(user_id, total):
            Search.objects.filter(pk=user_id).update(total_spent=F("total_spent") + total)

        def reset(keys):
            for key in keys:
                key.budget = 0

        class Tracker:
            def reset(self):
                self.cost = 0
        """,
        "spend",
        "views",
        "column",
        "reset",
    )
    assert jobs["spend"].idempotency == V.UNSAFE
    assert jobs["column"].idempotency == V.UNSAFE
    assert jobs["reset"].idempotency == V.UNSAFE
    assert K.ACCOUNT_STATE not in kinds(jobs["views"])  # a view counter is not money


def test_self_money_field_in_a_plain_object_is_its_own_bookkeeping() -> None:
    jobs = jobs_of(
        """
        class Meter:
            def start(self):
                self.cost = 0.0
        """,
        more=STARTER.format(name="Meter").replace("target=Meter", "target=Meter().start"),
    )
    assert "start" in jobs and K.ACCOUNT_STATE not in kinds(jobs["start"])


def test_a_claim_or_check_guards_only_what_comes_after_it() -> None:
    jobs = jobs_of(
        """
        from django.core.cache import cache
        from django.core.mail import send_mail
        from app.models import Alert, Job

        def claimed(key):
            if cache.add(key, 1, 60):
                send_mail("s", "b", "f", ["t"])

        def before_claim(key):
            send_mail("s", "b", "f", ["t"])
            cache.add(key, 1, 60)

        def checked(record_id):
            if not Alert.objects.filter(record_id=record_id).exists():
                Alert.objects.create(record_id=record_id)

        def other_model(record_id):
            if not Alert.objects.filter(record_id=record_id).exists():
                Job.objects.create(record_id=record_id)
        """,
        "claimed",
        "before_claim",
        "checked",
        "other_model",
    )
    assert jobs["claimed"].idempotency == V.NEEDS_KEY
    assert jobs["before_claim"].idempotency == V.NON_IDEMPOTENT
    assert jobs["checked"].idempotency == V.NEEDS_KEY
    assert jobs["other_model"].idempotency == V.NON_IDEMPOTENT  # the check is about Alerts


def test_a_guard_never_hides_money() -> None:
    jobs = jobs_of(
        """
        import stripe
        from django.core.cache import cache

        def charge(order_id):
            if cache.add(order_id, 1, 60):
                stripe.Charge.create(amount=100)
        """,
        "charge",
    )
    assert jobs["charge"].idempotency == V.UNSAFE


def test_row_loaded_by_get_and_default_manager_keep_their_model() -> None:
    jobs = jobs_of(
        """
        from app.models import Search
        from app.notify import Notifier

        def record(query):
            Search._default_manager.create(query=query)

        def touch(pk):
            Notifier.objects.get(pk=pk).ping()
        """,
        "record",
        "touch",
        notify=(
            "import requests\nfrom django.db import models\n\n"
            "class Notifier(models.Model):\n"
            "    def ping(self):\n"
            "        requests.post('https://x.example.com', json={})\n"
        ),
    )
    assert jobs["record"].idempotency == V.NON_IDEMPOTENT
    assert K.DB_INSERT in kinds(jobs["record"])
    assert K.HTTP_POST in kinds(jobs["touch"])


def test_sender_named_after_a_model_loaded_at_run_time_types_instance() -> None:
    jobs = jobs_of(
        "",
        receivers=(
            "from django.db.models.signals import post_save\n"
            "from app.loading import get_model\n\n"
            "def register():\n"
            "    Account = get_model('app', 'Account')\n"
            "    post_save.connect(on_save, sender=Account)\n\n"
            "def on_save(sender, instance, **kwargs):\n"
            "    instance.owner.ping()\n"
        ),
        accounts=(
            "import requests\nfrom django.db import models\n\n"
            "class Owner(models.Model):\n"
            "    def ping(self):\n"
            "        requests.post('https://x.example.com', json={})\n\n"
            "class Account(models.Model):\n"
            "    owner = models.OneToOneField(Owner, on_delete=models.CASCADE)\n"
        ),
        loading="def get_model(app, name):\n    return None\n",
    )
    assert K.HTTP_POST in kinds(jobs["on_save"])
