"""A job the caller waited for, whose files the caller goes on to read.

A direct call has finished when the caller's next line runs, and so has an
awaited hand-off to a thread (``await asyncio.to_thread(write, path)``,
``await loop.run_in_executor(None, write, path)``): the caller may rely on what
the job did. An enqueue returns at once, and the job runs later on a worker,
maybe on another machine. For most effects that is the move the user wants (the
mail goes later), but a job that writes files where it runs, followed by the
caller reading a name it handed to the job (the path, the folder, a value the
lifted closure read), is an ordering the caller depends on: moved, the caller
would read before the file is written, or read a file a worker wrote on its own
disk (or into a temporary folder the caller has removed by then).

A site whose pattern did not wait (a thread, a task, a commit callback, a future
no one waits for) already ran the job beside the caller, so moving it changes no
order the caller had: it is not checked here.
"""

from __future__ import annotations

import ast

from codemods._project import Project, enclosing_function
from inventory.models import CallSite, Job, Pattern, files_verb

_HANDOFFS = frozenset({Pattern.RUN_IN_EXECUTOR, Pattern.EXECUTOR_SUBMIT})
_LINES_SHOWN = 3
READ_AFTER = (
    "the caller waits for this call to finish ({how}) and reads `{name}` again after it "
    "({lines}), and the job {verb} files where it runs ({writes}): enqueued, the caller would "
    "go on before that is done, and a worker does it on its own disk; keep this site inline, "
    "or move what reads them into the job, and apply again"
)


def read_after(
    site: CallSite, job: Job, handed: tuple[str, ...], project: Project
) -> tuple[str, list[int]] | None:
    """The reason and the lines, when the caller waited for a job writing files and reads a
    name it handed over (an argument's name, or ``handed``: what a lifted closure read)."""
    writes = job.files_changed_here()
    if not writes or (site.pattern is not Pattern.DIRECT_CALL and site.pattern not in _HANDOFFS):
        return None
    found = _located(site, project)
    if found is None:
        return None
    function, call = found
    how = _waited(function, call, site.pattern)
    if how is None:
        return None
    end = call.end_lineno or call.lineno
    names = [*_names_in(site), *handed]
    for name in dict.fromkeys(names):
        lines = _read_after(function, name, end)
        if lines:
            shown = ", ".join(
                f"`{e.api}` at {e.location.path}:{e.location.line}" if e.location else f"`{e.api}`"
                for e in writes[:_LINES_SHOWN]
            )
            where = ", ".join(f"line {n}" for n in lines[:_LINES_SHOWN])
            reason = READ_AFTER.format(
                how=how, name=name, lines=where, verb=files_verb(writes), writes=shown
            )
            return reason, lines
    return None


def waited(site: CallSite, project: Project) -> str | None:
    """How the caller waits for the site's call to finish (a direct call, or an ``await`` of
    the hand-off), or None: a thread, a task, a future no one waits for at the call."""
    if site.pattern is Pattern.DIRECT_CALL:
        return "a direct call"
    found = _located(site, project) if site.pattern in _HANDOFFS else None
    return _waited(*found, site.pattern) if found is not None else None


def _located(site: CallSite, project: Project) -> tuple[ast.AST, ast.Call] | None:
    """The function holding the site's call, and the call."""
    info = project.module_at(site.location.path)
    if info is None:
        return None
    function = enclosing_function(info.tree, site.location.line)
    call = _call_at(function, site) if function is not None else None
    return (function, call) if function is not None and call is not None else None


def _call_at(function: ast.AST, site: CallSite) -> ast.Call | None:
    at = site.location
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and node.lineno == at.line and node.col_offset == at.column:
            return node
    return None


def _waited(function: ast.AST, call: ast.Call, pattern: Pattern) -> str | None:
    """How the caller waited for the call: a direct call, or an ``await`` of the hand-off."""
    if pattern is Pattern.DIRECT_CALL:
        return "a direct call"
    for node in ast.walk(function):
        if isinstance(node, ast.Await) and node.value is call:
            return "it is awaited"
    return None


def _names_in(site: CallSite) -> list[str]:
    """The variables the site hands to the job as they are held: an argument written as a
    name or an attribute or item of one (``path``, ``report.path``, ``paths[0]``) gives that
    name. A value made for the call (``f"{folder}/{name}.png"``, ``join(folder, name)``)
    names no file the caller holds, so its parts do not count."""
    roots = (held_root(argument.source) for argument in site.arguments)
    return [root for root in roots if root is not None]


def held_root(source: str) -> str | None:
    """The name under ``transaction``, ``self.order``, ``rows[0]`` (an object the caller
    keeps a name for); None for a literal or a value made for the call."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _read_after(function: ast.AST, name: str, end: int) -> list[int]:
    """Lines after ``end`` where the function reads ``name`` (not inside a nested def)."""
    lines: set[int] = set()
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Load)
            and node.lineno > end
        ):
            lines.add(node.lineno)
        todo.extend(ast.iter_child_nodes(node))
    return sorted(lines)
