"""Django views that return the job's result: enqueue and answer ``202 Accepted``.

A function view or a class-based view's method whose result only feeds the
response body (``codemods._rewrites.accepted``) now returns
``JsonResponse({"job_id": ..., "status_url": reverse(...)}, status=202)``;
``codemods._edits.django_status`` adds the status view and its urlpattern to
the app's ``urls.py``.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.accepted import rewrite_accepted
from codemods._types import Block, Edit, Import, Skip, Target

RESPONSE_IMPORTS = (Import("django.http", "JsonResponse"), Import("django.urls", "reverse"))
NO_ROUTE = "no status view could be placed for this view: answering 202 would point nowhere"


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    route = target.status_route
    if route is None:
        return Skip(NO_ROUTE)

    def answer(handle: str) -> cst.BaseExpression:
        url = f'reverse("{route.url_name}", args=[{handle}.id])'
        return cst.parse_expression(
            f'JsonResponse({{"job_id": {handle}.id, "status_url": {url}}}, status=202)'
        )

    return rewrite_accepted(block, index, target, answer, RESPONSE_IMPORTS)
