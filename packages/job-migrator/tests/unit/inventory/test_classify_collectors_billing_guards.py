"""In-memory collectors, billing models persisting themselves, opaque calls behind a
dedup guard: small reproductions of the shapes seen on real code."""

from __future__ import annotations

from tests.unit.inventory.test_classify_state_guards_types import K, V, jobs_of, kinds

COLLECTOR = """
from collections import deque


class TraceCollector:
    def __init__(self):
        self._traces = deque(maxlen=1000)

    def add(self, trace):
        self._traces.append(trace)


collector = TraceCollector()
PENDING = []
"""


def test_an_append_to_a_module_level_collector_object_repeats() -> None:
    jobs = jobs_of(
        """
        def record(name):
            from app.profiling import collector
            collector.add({"name": name})
        """,
        "record",
        profiling=COLLECTOR,
    )
    assert jobs["record"].idempotency == V.NON_IDEMPOTENT
    assert kinds(jobs["record"]) == {K.CACHE_INCR}


def test_an_append_to_a_module_level_list_repeats() -> None:
    jobs = jobs_of(
        """
        from app.profiling import PENDING

        def remember(event_id):
            PENDING.append(event_id)
        """,
        "remember",
        profiling=COLLECTOR,
    )
    assert jobs["remember"].idempotency == V.NON_IDEMPOTENT


def test_a_local_list_or_an_object_without_a_module_instance_is_not_a_collector() -> None:
    jobs = jobs_of(
        """
        class Builder:
            def __init__(self):
                self.parts = []

            def add(self, part):
                self.parts.append(part)

        def build(order_id):
            rows = []
            rows.append(order_id)
            builder = Builder()
            builder.add(order_id)
            return rows, builder.parts
        """,
        "build",
    )
    assert jobs["build"].idempotency == V.IDEMPOTENT


def test_a_billing_model_method_saving_itself_is_account_state() -> None:
    models = """
    from django.db import models

    class Billing(models.Model):
        def save(self, *args, **kwargs):
            super().save(*args, **kwargs)

        def check_limits(self):
            self.paid = False
            self.save()
    """
    jobs = jobs_of(
        """
        from app.billing import Billing

        def billing_check(pk):
            Billing.objects.get(pk=pk).check_limits()
        """,
        "billing_check",
        billing=models,
    )
    assert jobs["billing_check"].idempotency == V.UNSAFE
    assert K.ACCOUNT_STATE in kinds(jobs["billing_check"])


def test_a_plain_model_saving_itself_is_not_money() -> None:
    models = """
    from django.db import models

    class Profile(models.Model):
        def touch(self):
            self.save()
    """
    jobs = jobs_of(
        """
        from app.profile import Profile

        def touch(pk):
            Profile.objects.get(pk=pk).touch()
        """,
        "touch",
        profile=models,
    )
    assert jobs["touch"].idempotency != V.UNSAFE


def test_an_opaque_call_behind_an_enqueue_once_guard_needs_a_key() -> None:
    jobs = jobs_of(
        """
        from app.models import Job

        def enqueue_once(name, callback):
            if Job.objects.filter(name=name).exists():
                return
            Job.objects.create(name=name)
            callback(name)
        """,
        "enqueue_once",
    )
    assert jobs["enqueue_once"].idempotency == V.NEEDS_KEY


def test_an_opaque_call_without_a_guard_stays_unknown_and_alone_is_never_idempotent() -> None:
    jobs = jobs_of(
        """
        def run_hook(name, callback):
            callback(name)

        def run_once(name, callback):
            from django.core.cache import cache
            if cache.add(f"hook:{name}", 1):
                callback(name)
        """,
        "run_hook",
        "run_once",
    )
    assert jobs["run_hook"].idempotency == V.UNKNOWN
    assert jobs["run_once"].idempotency == V.NEEDS_KEY
