"""The Flask status route 202 answers point at: ``GET <prefix>/jobs/<int:job_id>``.

It joins the app or blueprint the rewritten view is routed on, at the end of
the view's module (``codemods._status_route`` proved that owner is the
module's only one and that the name is free). A second run finds the view
and adds nothing.
"""

from __future__ import annotations

import libcst as cst

from codemods._edits.imports import add_import
from codemods._project import module_name
from codemods._status_route import FLASK_RULE, MARKER, VIEW
from codemods._types import StatusRoute

VIEW_SOURCE = '''@{owner}.route("{rule}")
def {view}(job_id):
    """The status of a queued job, and its result once done ({marker})."""
    try:
        record = queue_runtime.get_job(job_id).record()
    except queue_runtime.QueueError as exc:
        abort(404, description=f"job {{job_id}}: {{exc}}")
    return jsonify(
        job_id=record.id,
        name=record.name,
        status=str(record.status),
        result=record.result,
        error=record.error,
    )
'''


def add_route(route: StatusRoute, module: cst.Module) -> cst.Module:
    """``module`` (the view's) with the status view on ``route.owner``, unless it has it."""
    has_view = any(
        isinstance(stmt, cst.FunctionDef) and stmt.name.value == VIEW for stmt in module.body
    )
    if has_view or route.owner is None:
        return module
    source = VIEW_SOURCE.format(owner=route.owner, rule=FLASK_RULE, view=VIEW, marker=MARKER)
    view = cst.ensure_type(cst.parse_statement(source), cst.FunctionDef)
    # Two blank lines before a top-level def, as black and ruff format leave them.
    view = view.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    updated = module.with_changes(body=[*module.body, view])
    own = frozenset({module_name(route.path).split(".", 1)[0]})
    for package, name in (("queue_runtime", None), ("flask", "abort"), ("flask", "jsonify")):
        updated = add_import(updated, package, name, own)
    return updated
