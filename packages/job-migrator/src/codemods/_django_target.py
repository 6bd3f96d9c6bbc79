"""What Django's task API cannot carry: the sites ``target = "django-tasks"`` leaves alone.

Django's ``@task`` / ``task.enqueue()`` (on queue_runtime's backend) moves a call
when everything the site needs exists in Django's API: a module-level function
(Django refuses any other), arguments proven to be JSON (Django's ``enqueue``
refuses anything else with ``TypeError``, where queue_runtime's codecs would
carry a model by reference), no idempotency key (Django's API has none), no
202 answer reading the job's handle, no schedule (Django has no periodic
tasks), and no delivery or wrapper job of queue_runtime's own. Each refusal is
one reason, shown as the site's skip.
"""

from __future__ import annotations

from codemods._types import Crossing, DefKind, Target

KEEP = '; keep it on queue_runtime\'s API (target = "queue-runtime")'
TASK_ITSELF = (
    "; the job is a Django task, so it moves through Django's `enqueue` only (pass values "
    "the scan proves JSON: a literal, a parameter or attribute declared `str`, `int`...)"
)


def refusal(target: Target) -> str | None:
    """Why Django's task API cannot express this site's move; None when it can. A job that
    is a Django task itself has no other API: the reason then says so instead of naming
    queue_runtime's."""
    found = _refusal(target)
    if found is None or not target.job.django_task:
        return found
    return found.removesuffix(KEEP) + TASK_ITSELF


def _refusal(target: Target) -> str | None:
    if target.kind is not DefKind.FUNCTION or "." in target.qualpath:
        return "Django tasks must be module-level functions" + KEEP
    if target.key_template is not None:
        return "Django's task API has no idempotency keys" + KEEP
    if target.accepted or target.status_route is not None:
        return (
            "the site answers 202 with the job's status, which Django's API does not serve" + KEEP
        )
    if target.schedule:
        return "Django's task API has no periodic tasks" + KEEP
    if target.delivery or target.wrapper is not None:
        return "the move needs a job of queue_runtime's own (a delivery or a wrapper)" + KEEP
    unproven = [c.source.strip() for c in target.crossings if c.how is not Crossing.JSON]
    if unproven:
        listed = ", ".join(unproven)
        return f"Django's enqueue takes JSON only, and {listed} is not proven JSON" + KEEP
    return None
