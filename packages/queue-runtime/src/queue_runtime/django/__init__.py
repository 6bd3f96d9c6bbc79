"""``queue_runtime`` as a Django task backend (``django.tasks``, Django 6.0 and 6.1).

```python
TASKS = {"default": {"BACKEND": "queue_runtime.django.TaskBackend"}}

from django.tasks import task          # Django 6.1: the runtime's options as keywords

@task(retries=3, backoff=2.0, timeout=30, pool="batch", idempotency="idempotent")
def send_receipt(order_id: int) -> str: ...

result = send_receipt.enqueue(7)       # a job in the runtime's queue
result.refresh(); result.status         # READY, RUNNING, SUCCESSFUL or FAILED
```

``queue_runtime.django.task`` takes the same keywords on Django 6.0. Workers
are ``queue-runtime worker APP_MODULE --django-settings mysite.settings``.
See docs/django.md.
"""

from queue_runtime.django._backend import TaskBackend
from queue_runtime.django._results import LeaseLost
from queue_runtime.django._task import RuntimeTask, task

__all__ = ["LeaseLost", "RuntimeTask", "TaskBackend", "task"]
