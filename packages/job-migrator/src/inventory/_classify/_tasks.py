"""Task-framework calls: which ones run the task's function in the process.

``send_receipt.enqueue(order_id)`` on a function decorated with Django's
``@task`` (``django.tasks``, Django 6, or its backport ``django_tasks``) runs
the function at once under the default ``ImmediateBackend``, the backend a
project has unless it configures another: the call is a call of the function,
and the job's effects are the task's effects. Broker-backed frameworks (Celery
``.delay`` / ``.apply_async``, Huey, RQ, Dramatiq ``.send``) take the work out of
the process instead: the catalogue's ``enqueue`` entries speak for those, and a
retry that reaches one enqueues the work again (``non_idempotent``).

Each of those frameworks also documents a call that runs the task's function here, in
the caller, with no broker: Celery's ``Task.apply`` ("execute this task locally, by
blocking until the task returns") and ``Task.run`` (the task's body), Huey's
``call_local`` ("call the function locally, bypassing the queue"), Dramatiq's
``actor.fn`` (the decorated function itself). A request that calls one does the task's
work inline: the call is a call of the function, as a plain ``send_receipt(order_id)``
is. Huey alone enqueues a task called as a function: that call is Huey's enqueue
(``HUEY_ENQUEUE``), not a call of the function. A function object has no such attribute of its own: the method is read only on a
project function one of whose decorators names a task (a Celery app's or
``shared_task``, Huey's, Dramatiq's), never on anything else.
"""

from __future__ import annotations

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory.models import TASK_RUNS_HERE

DJANGO_TASK_DECORATORS = frozenset(
    {"django.tasks.task", "django.tasks.base.task", "django_tasks.task", "django_tasks.base.task"}
)
# Methods of a Django Task that run (or, with a queue backend, enqueue) the function.
_RUNS = frozenset({"enqueue", "aenqueue", "call", "acall"})
# The decorators that make a function a broker's task (``TASK_RUNS_HERE`` says how each runs
# one in the caller): the decorator's top package names the framework, or, for an app or
# broker object of the project's own the index cannot type, its last name does.
_DECORATED_BY = {
    "celery": frozenset({"task", "shared_task"}),
    "huey": frozenset({"task", "db_task", "periodic_task", "db_periodic_task"}),
    "dramatiq": frozenset({"actor"}),
}
_OTHER_QUEUES = frozenset({"django", "django_tasks", "rq", "queue_runtime", *_DECORATED_BY})


def immediate_task(index: SymbolIndex, name: str) -> str | None:
    """The project function ``name`` runs when it is ``task.enqueue`` of a Django task, or
    a broker task's local run (``thumbnail.apply((pk,))``, ``e.call_local(x)``)."""
    head, _, method = name.rpartition(".")
    if not head or (method not in _RUNS and method not in TASK_RUNS_HERE):
        return None
    found = index.resolve(head)
    fn = index.functions.get(found.name) if found.kind == SymbolKind.FUNCTION else None
    if fn is None:
        return None
    if method in _RUNS and DJANGO_TASK_DECORATORS.intersection(fn.decorators):
        return fn.qualname
    framework = TASK_RUNS_HERE.get(method)
    if framework and any(_runs_on(d, framework) for d in _decorators(index, fn.decorators)):
        return fn.qualname
    return None


# Huey's task, called: "the decorated function, when called, will enqueue a task" (Huey's
# documentation; ``TaskWrapper.__call__`` is ``self.huey.enqueue(self.s(...))``).
HUEY_ENQUEUE = "huey.api.TaskWrapper.__call__"


def enqueued_by_call(index: SymbolIndex, function: str) -> str | None:
    """The catalogue's name for a call of the project function ``function`` when calling it
    is its framework's enqueue, not a run of it (a Huey task); None otherwise. Celery and
    Dramatiq run a task called as a function in the caller: a call of the function."""
    fn = index.functions.get(function)
    if fn is None or not fn.decorators:
        return None
    return HUEY_ENQUEUE if broker_of(index, fn.decorators) == "huey" else None


def _decorators(index: SymbolIndex, decorators: list[str]) -> list[str]:
    """Each decorator as the index resolves it: ``@app.task`` of an app another module
    makes (``app = Celery(...)``) is ``celery.Celery.task``."""
    return [index.resolve(d).name or d for d in decorators]


def _runs_on(decorator: str, framework: str) -> bool:
    """``decorator`` makes a task of ``framework``: its own package's, or a project
    object's method named as that framework names its task decorators."""
    top, last = decorator.partition(".")[0], decorator.rpartition(".")[2]
    if top in _OTHER_QUEUES:
        return top == framework
    return last in _DECORATED_BY[framework]


def broker_of(index: SymbolIndex, decorators: list[str]) -> str:
    """The broker a function's decorators make it a task of: its name, "a task queue" when
    the decorator is named as more than one names theirs (``@app.task`` of an app the
    project made: Celery's or Huey's), "" when none does."""
    for decorator in _decorators(index, decorators):
        found = [f for f in _DECORATED_BY if _runs_on(decorator, f)]
        if found:
            return found[0] if len(found) == 1 else "a task queue"
    return ""
