"""The Django status view 202 answers point at, and its urlpattern in the app's ``urls.py``.

The view lives in a new module beside ``urls.py`` (``job_status.py``); the
pattern ``jobs/<int:job_id>/`` named ``job_status`` is appended to
``urlpatterns`` (``codemods._status_route`` proved the list is a literal, the
file routes the rewritten view, and the names are free). A second run finds
the module and the pattern and adds nothing.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import libcst as cst
import libcst.matchers as m

from codemods._edits.imports import add_import
from codemods._status_route import MARKER, VIEW
from codemods._types import StatusRoute

VIEW_SOURCE = f'''"""GET jobs/<job_id>/: the status of a queued job ({MARKER}).

Views that hand their work to the queue answer 202 with this URL.
"""

import queue_runtime
from django.http import Http404, JsonResponse
from django.views.decorators.http import require_GET


@require_GET
def {VIEW}(request, job_id):
    try:
        record = queue_runtime.get_job(job_id).record()
    except queue_runtime.QueueError as exc:
        raise Http404(f"job {{job_id}}: {{exc}}") from exc
    return JsonResponse(
        {{
            "job_id": record.id,
            "name": record.name,
            "status": str(record.status),
            "result": record.result,
            "error": record.error,
        }}
    )
'''
PATTERN = f'path("jobs/<int:job_id>/", {VIEW}.{VIEW}, name="{VIEW}")'


def view_path(route: StatusRoute) -> str:
    """Where the status view module goes: beside ``urls.py``."""
    return (PurePosixPath(route.path).parent / f"{VIEW}.py").as_posix()


def add_pattern(route: StatusRoute, module: cst.Module) -> cst.Module:
    """``module`` (the app's ``urls.py``) with the status pattern and its imports, once."""
    if f"{VIEW}.{VIEW}" in module.code:
        return module
    updated = _append_pattern(module)
    own = frozenset({(route.owner or VIEW).split(".", 1)[0]})
    updated = add_import(updated, "django.urls", "path", own)
    if route.owner is not None:
        return add_import(updated, route.owner, VIEW, own)
    return add_import(updated, VIEW, None, own)


_URLPATTERNS = m.SimpleStatementLine(
    body=[m.Assign(targets=[m.AssignTarget(target=m.Name("urlpatterns"))], value=m.List())]
)


def _append_pattern(module: cst.Module) -> cst.Module:
    """The status pattern as the last element of the last top-level ``urlpatterns = [...]``."""
    found = [i for i, stmt in enumerate(module.body) if m.matches(stmt, _URLPATTERNS)]
    if not found:  # the route was found on a plain ``urlpatterns = [...]``: never the case
        return module
    at = found[-1]
    line = cst.ensure_type(module.body[at], cst.SimpleStatementLine)
    assign = cst.ensure_type(line.body[0], cst.Assign)
    listed = cst.ensure_type(assign.value, cst.List)
    appended = _appended(listed, cst.Element(cst.parse_expression(PATTERN)))
    new = line.with_changes(body=[assign.with_changes(value=appended)])
    return module.with_changes(body=[*module.body[:at], new, *module.body[at + 1 :]])


def _appended(listed: cst.List, new: cst.Element) -> cst.List:
    elements = list(listed.elements)
    if not elements or isinstance(elements[-1].comma, cst.MaybeSentinel):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return listed.with_changes(
            elements=[*elements[:-1], *(e.with_changes(comma=comma) for e in elements[-1:]), new]
        )
    # A trailing comma: one element per line. The new one goes on a line of its own, indented
    # as the others (the break after ``[`` is the list's, between elements it is the comma's).
    last = elements[-1]
    between = elements[-2].comma if len(elements) > 1 else None
    sep = _uncommented(
        between
        if isinstance(between, cst.Comma)
        else cst.Comma(whitespace_after=listed.lbracket.whitespace_after)
    )
    closing = listed.rbracket.whitespace_before
    if not (
        isinstance(closing, cst.ParenthesizedWhitespace)
        and isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace)
    ):
        return listed.with_changes(
            elements=[
                *elements[:-1],
                last.with_changes(comma=sep),
                new.with_changes(comma=last.comma),
            ]
        )
    # What followed the last pattern (its ``# comment``, comment lines before ``]``) stays after
    # it; the new pattern comes next, indented as the others, then ``]`` as before.
    after_last = closing.with_changes(
        indent=sep.whitespace_after.indent, last_line=sep.whitespace_after.last_line
    )
    assert isinstance(last.comma, cst.Comma)
    return listed.with_changes(
        elements=[
            *elements[:-1],
            last.with_changes(comma=last.comma.with_changes(whitespace_after=after_last)),
            new.with_changes(comma=last.comma),
        ],
        rbracket=listed.rbracket.with_changes(
            whitespace_before=closing.with_changes(
                first_line=cst.TrailingWhitespace(), empty_lines=[]
            )
        ),
    )


def _uncommented(comma: cst.Comma) -> cst.Comma:
    """The comma with its line break and indent, without the comment lines that followed it
    (``# application`` above the last pattern must not be copied above the new one)."""
    space = comma.whitespace_after
    if not isinstance(space, cst.ParenthesizedWhitespace):
        return comma
    first = space.first_line.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))
    return comma.with_changes(whitespace_after=space.with_changes(empty_lines=[], first_line=first))
