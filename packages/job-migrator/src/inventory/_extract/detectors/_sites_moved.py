"""Moved sites: calls that already hand a job to ``queue_runtime``.

``migrator apply`` rewrites a site to ``fn.enqueue(...)`` or
``fn.options(...).enqueue(...)`` and decorates ``fn`` with ``queue_runtime``'s
``@job``. A re-scan must keep knowing that job (its verdict, its rollout), so these calls
are sites of their own, ``Pattern.ENQUEUE``: the site is moved, the job is ``fn``.

The runtime's enqueueing API (``queue_runtime.jobs.JobFunction``): ``enqueue(*args,
**kwargs)``, ``enqueue_many([(args, kwargs), ...])`` and ``options(...).enqueue(...)``
(``BoundEnqueue``); there is no ``aenqueue``. Here only the shape is read; whether ``fn``
is decorated with ``@job`` is decided across modules by the classifier
(``inventory._classify._moved``): an ``.enqueue`` of anything else is no site.
"""

from __future__ import annotations

import ast

from inventory._extract._state import Candidate
from inventory._extract.detectors._site_common import CallSite, candidate
from inventory._extract.detectors._targets import call_arguments, job_target
from inventory.models import Pattern

ENQUEUE_METHODS = frozenset({"enqueue", "enqueue_many"})
# ``enqueue``'s keywords that are queue options, not the job's (``queue_runtime.jobs.OPTION_NAMES``;
# a job with a parameter of that name takes them through ``.options()`` instead).
QUEUE_OPTIONS = frozenset({"idempotency_key", "run_at", "tenant", "conn", "priority"})
_OPTIONS = "options"


def moved_call(call: CallSite) -> Candidate | None:
    """``fn.enqueue(x)``, ``fn.enqueue_many(calls)``, ``fn.options(...).enqueue(x)``."""
    func = call.node.func
    if not isinstance(func, ast.Attribute) or func.attr not in ENQUEUE_METHODS:
        return None
    head = _job_node(func.value, func.attr)
    if head is None:
        return None
    resolver = call.state.resolver
    job = job_target(head, resolver)
    if job.target is None:
        return None  # an ``.enqueue`` of something only known at run time: not a job of ours
    keywords = [k for k in call.node.keywords if k.arg not in QUEUE_OPTIONS]
    arguments = call_arguments(call.node.args, keywords, resolver)
    return candidate(Pattern.ENQUEUE, call.node, job, call, arguments, "moved to queue_runtime")


def _job_node(receiver: ast.expr, method: str) -> ast.expr | None:
    """The expression naming the job: ``fn`` in ``fn.enqueue`` / ``fn.options(...).enqueue``."""
    if isinstance(receiver, ast.Call):
        options = receiver.func
        named = isinstance(options, ast.Attribute) and options.attr == _OPTIONS
        if not named or method != "enqueue":
            return None
        assert isinstance(options, ast.Attribute)
        receiver = options.value
    return receiver if isinstance(receiver, ast.Name | ast.Attribute) else None
