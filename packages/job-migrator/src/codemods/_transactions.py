"""Whether a Django mail call runs inside a database transaction, read from the source.

A failed send inside a transaction raises through it and rolls back what the
transaction wrote (the new user, the token the mail links to). Delivered by a
worker, the send cannot fail there: the rows are committed, the mail is not
sent. A call gets inside a transaction two ways this reads:

* ``transaction.atomic`` around it, by ``with`` or by decorator;
* ``ATOMIC_REQUESTS`` on a ``DATABASES`` entry of the project's settings:
  Django then runs every view in ``atomic``, so any call a request reaches is
  inside one, unless its view opts out with ``@transaction.non_atomic_requests``.

Nothing is imported: settings are read with ``ast``, and a value that is not a
literal ``False`` (an environment lookup, a name) counts as on.
"""

from __future__ import annotations

import ast

from codemods._project import ModuleInfo, Project, enclosing_function
from inventory.models import CallSite
from inventory.project import parse_module

SETTING = "ATOMIC_REQUESTS"


def atomic_around(site: CallSite, project: Project) -> list[int]:
    """Lines of the ``transaction.atomic`` blocks or decorators the call runs inside, else []."""
    info = project.module_at(site.location.path)
    if info is None:
        return []
    line, lines = site.location.line, []
    for node in ast.walk(info.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside = node.lineno <= line <= (node.end_lineno or node.lineno)
            lines += [d.lineno for d in node.decorator_list if inside and _named(d, "atomic")]
        elif isinstance(node, ast.With | ast.AsyncWith) and node.body:
            last = node.body[-1].end_lineno or node.body[-1].lineno
            if node.body[0].lineno <= line <= last:
                lines += [node.lineno for item in node.items if _named(item.context_expr, "atomic")]
    return sorted(set(lines))


def atomic_reason(lines: list[int]) -> str:
    where = ", ".join(str(n) for n in lines)
    return (
        f"the call runs inside transaction.atomic (line(s) {where}): a failed send raises "
        "through it and rolls back what it wrote; delivered by a worker, the send cannot "
        "fail there, so the rows would stay without their mail; keep it inline, or send "
        "after the transaction (transaction.on_commit) and rewrite it by hand"
    )


def atomic_requests(project: Project) -> list[str]:
    """``path:line`` of each settings entry that turns ``ATOMIC_REQUESTS`` on, else [].

    Read once per apply (``Project.facts``), however many mail calls ask.
    """
    if SETTING not in project.facts:
        project.facts[SETTING] = _settings_lines(project)
    return project.facts[SETTING]


def _settings_lines(project: Project) -> list[str]:
    found: list[str] = []
    for path, text in project.texts_containing(SETTING).items():
        try:
            info = ModuleInfo("", parse_module(text), text, path=path)
        except SyntaxError:
            continue
        found += [f"{path}:{line}" for line in _turned_on(info)]
    return found


def _turned_on(info: ModuleInfo) -> list[int]:
    """Lines setting it: ``{"ATOMIC_REQUESTS": v}``, ``dict(ATOMIC_REQUESTS=v)``, ``d["..."] = v``."""
    lines: list[int] = []
    for node in ast.walk(info.tree):
        values: list[ast.expr] = []
        if isinstance(node, ast.Dict):
            values = [v for k, v in zip(node.keys, node.values, strict=True) if _is(k, SETTING)]
        elif isinstance(node, ast.Call):
            values = [k.value for k in node.keywords if k.arg == SETTING]
        elif isinstance(node, ast.Assign):
            hit = any(isinstance(t, ast.Subscript) and _is(t.slice, SETTING) for t in node.targets)
            values = [node.value] if hit else []
        lines += [v.lineno for v in values if not _false(v, info)]
    return sorted(set(lines))


def _is(node: ast.expr | None, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _false(value: ast.expr, info: ModuleInfo) -> bool:
    """A literal ``False``, or a module-level name assigned one (``ATOMIC = False``)."""
    if isinstance(value, ast.Name) and value.id in info.assignments:
        value = info.assignments[value.id]
    return isinstance(value, ast.Constant) and value.value is False


def outside_requests(site: CallSite, project: Project, callers: list[CallSite]) -> bool:
    """The call's function is a view that opts out (``@transaction.non_atomic_requests``),
    or, for a call inside the job, every one of the job's callers is in such a view."""
    if _opted_out(site, project):
        return True
    return bool(callers) and all(_opted_out(c, project) for c in callers)


def _opted_out(site: CallSite, project: Project) -> bool:
    info = project.module_at(site.location.path)
    fn = enclosing_function(info.tree, site.location.line) if info is not None else None
    return fn is not None and any(_named(d, "non_atomic_requests") for d in fn.decorator_list)


def requests_reason(where: list[str]) -> str:
    shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
    return (
        f"{SETTING} is on ({shown}): Django runs every view in transaction.atomic, so a "
        "failed send raises through it and rolls back what the request wrote; delivered by "
        "a worker, the send cannot fail there, so the rows would stay without their mail; "
        "keep it inline, or mark the view @transaction.non_atomic_requests (or send after "
        "the transaction, transaction.on_commit) and apply again"
    )


def _named(expr: ast.expr, name: str) -> bool:
    """``atomic``, ``transaction.atomic``, ``transaction.atomic(...)``, ``@atomic(durable=True)``."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    found = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return bool(found == name)
