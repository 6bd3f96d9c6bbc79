"""Flask views that return the job's result: enqueue and answer ``202 Accepted``.

A view function on an app or blueprint, or a ``MethodView`` method, whose
result only feeds the response body (``codemods._rewrites.accepted``) now
returns ``jsonify(job_id=..., status_url=url_for(".job_status", ...)), 202``.
The leading dot resolves to the view's own blueprint (or the app), where
``codemods._edits.flask_status`` adds ``GET <prefix>/jobs/<int:job_id>``.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.accepted import rewrite_accepted
from codemods._types import Block, Edit, Import, Skip, Target

RESPONSE_IMPORTS = (Import("flask", "jsonify"), Import("flask", "url_for"))
NO_ROUTE = "no status route could be placed for this view: answering 202 would point nowhere"


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    route = target.status_route
    if route is None:
        return Skip(NO_ROUTE)

    def answer(handle: str) -> cst.BaseExpression:
        return cst.parse_expression(
            f'jsonify(job_id={handle}.id, status_url=url_for("{route.url_name}", '
            f"job_id={handle}.id)), 202"
        )

    return rewrite_accepted(block, index, target, answer, RESPONSE_IMPORTS)
