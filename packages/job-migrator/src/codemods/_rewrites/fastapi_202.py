"""FastAPI handlers that use the job's result: enqueue and answer ``202 Accepted``.

The response carries the job id and the URL of the generated status endpoint
(``GET /jobs/{job_id}``, see ``codemods._edits.status_endpoint``). Only shapes where the
result's sole consumer is the handler's response are rewritten, the same shapes
as for Flask and Django (``codemods._rewrites.accepted``):

* ``return fn(a)`` / ``return await asyncio.to_thread(fn, a)``
* ``x = fn(a)`` (or an awaited hand-off) whose only other use is the ``return``
  that ends the same block.

Anything else (the result feeds other work, a condition, a log line) stays as
it is and is reported ``manual`` with the consuming lines.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.accepted import rewrite_accepted
from codemods._types import Block, Edit, Import, Skip, Target

RESPONSE_IMPORT = Import("fastapi.responses", "JSONResponse")


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    return rewrite_accepted(block, index, target, _accepted, (RESPONSE_IMPORT,))


def _accepted(handle: str) -> cst.BaseExpression:
    return cst.parse_expression(
        f'JSONResponse({{"job_id": {handle}.id, "status_url": f"/jobs/{{{handle}.id}}"}},'
        " status_code=202)"
    )
