"""Task-framework calls: which ones run the task's function in the process.

``send_receipt.enqueue(order_id)`` on a function decorated with Django's
``@task`` (``django.tasks``, Django 6, or its backport ``django_tasks``) runs
the function at once under the default ``ImmediateBackend``, the backend a
project has unless it configures another: the call is a call of the function,
and the job's effects are the task's effects. Broker-backed frameworks (Celery
``.delay`` / ``.apply_async``, Huey, RQ, Dramatiq ``.send``) take the work out of
the process instead: the catalogue's ``enqueue`` entries speak for those, and a
retry that reaches one enqueues the work again (``non_idempotent``).
"""

from __future__ import annotations

from inventory._classify._index import SymbolIndex, SymbolKind

DJANGO_TASK_DECORATORS = frozenset(
    {"django.tasks.task", "django.tasks.base.task", "django_tasks.task", "django_tasks.base.task"}
)
# Methods of a Django Task that run (or, with a queue backend, enqueue) the function.
_RUNS = frozenset({"enqueue", "aenqueue", "call", "acall"})


def immediate_task(index: SymbolIndex, name: str) -> str | None:
    """The project function ``name`` runs when it is ``task.enqueue`` of a Django task."""
    head, _, method = name.rpartition(".")
    if method not in _RUNS or not head:
        return None
    found = index.resolve(head)
    fn = index.functions.get(found.name) if found.kind == SymbolKind.FUNCTION else None
    if fn is None or not DJANGO_TASK_DECORATORS.intersection(fn.decorators):
        return None
    return fn.qualname
