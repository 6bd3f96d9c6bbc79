"""Calls the catalogue explains are leaves; task-framework calls; metrics and error reports."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

_TASKS = """
from django.tasks import task

from shop.models import Upload

@task()
def delete_upload(upload_id):
    Upload.objects.filter(id=upload_id).delete()
"""
_MODELS = "from django.db import models\n\nclass Upload(models.Model):\n    pass\n\nclass Search(models.Model):\n    pass\n"

EXAMPLES: list[RuleExample] = [
    example(
        "a Django @task's enqueue() runs the task: its effects are the job's",
        """
        from shop.tasks import delete_upload

        def forget_upload(upload_id):
            delete_upload.enqueue(upload_id)
        """,
        "forget_upload",
        V.IDEMPOTENT,
        {K.DB_DELETE, K.DB_READ},
        "`task.enqueue(...)` of a function decorated with `django.tasks.task` (or the "
        "`django_tasks` backport) runs it at once under the default `ImmediateBackend`, so the "
        "call is followed into the task. A broker's `.delay()` (Celery...) is an `enqueue` "
        "effect instead: a retry enqueues the work again.",
        more_files={"shop/tasks.py": _TASKS, "shop/models.py": _MODELS},
    ),
    example(
        "non_idempotent: a metrics counter counts a retry again",
        """
        from prometheus_client import Counter

        SEARCHES = Counter("searches_total", "searches", ["kind"])

        def record_search(kind):
            SEARCHES.labels(kind).inc()
        """,
        "record_search",
        V.NON_IDEMPOTENT,
        {K.METRIC_INCR},
        "A counter `+ 1` (or a histogram observation) repeats on a retry; a gauge `set` "
        "converges. `labels(...)` only picks the series.",
    ),
    example(
        "idempotent: metrics next to real work are instrumentation",
        """
        from django.core.cache import cache
        from prometheus_client import Histogram

        CACHE_WRITES = Histogram("cache_write_seconds", "cache writes")

        def store_totals(key, totals):
            cache.set(key, totals, timeout=60)
            CACHE_WRITES.observe(0.1)
        """,
        "store_totals",
        V.IDEMPOTENT,
        {K.CACHE_SET, K.METRIC_INCR},
        "Counting decides only when it is all the job does; next to a write or a send, a "
        "double-counted metric changes no outcome, so the overwrite decides.",
    ),
    example(
        "a definite insert decides, whatever else is unresolved",
        """
        import sentry_sdk
        from shop.models import Search

        def log_search(user, query):
            try:
                Search._default_manager.create(user=user, query=query)
            except Exception as error:
                sentry_sdk.capture_exception(error)
            user.profile.touch()
        """,
        "log_search",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "`_default_manager` is a manager like `objects`; a known repeat is the lower bound, so "
        "the unresolved `user.profile.touch()` lowers the confidence but does not make the "
        "verdict `unknown`. Error reporting (`sentry_sdk.capture_exception`) is no effect.",
        more_files={"shop/models.py": _MODELS},
    ),
]
