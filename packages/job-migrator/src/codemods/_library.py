"""A library callable handed to a spawn becomes a job through a wrapper written beside the site.

``transaction.on_commit(partial(default_storage.delete, name))`` ->
``transaction.on_commit(partial(_delete_from_default_storage.enqueue, name))``,
with a thin job written at the end of the site's module::

    @job(pool="batch", idempotent=True)
    def _delete_from_default_storage(name):
        return default_storage.delete(name)

Only when a worker provably reaches the same callable: it is written at the
site as ``name`` or ``name.attr...`` where ``name`` is bound by a module-level
import of the site's module (not a local, not a project module: a project
function is moved as itself, a project object by ``codemods._service``), and
that import resolves to the very callable the scan names as the job. Importing
the site's module in the worker then binds it again: a module-level function of
a library, or a method of a module-level object of one. Only spawns (a commit
callback, a thread, a task), whose callers never read what the call returns,
and only plain arguments (no ``*``/``**``). Anything else keeps the scan's
reason ("no project function to move: wrap it in one").
"""

from __future__ import annotations

import ast

from codemods._project import ModuleInfo, Project, enclosing_function
from codemods._resolve import Where, assignments, own_nodes, resolve_expr
from codemods._types import Wrapper
from inventory.models import CallSite, Job, Pattern

_SPAWNS = frozenset({Pattern.ON_COMMIT, Pattern.THREAD, Pattern.ASYNCIO_TASK})
NO_PROJECT_FUNCTION = "no project function to move"
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def is_library_job(site: CallSite, job: Job) -> bool:
    """The scan found no project definition: the site hands a library callable over."""
    return job.location is None and NO_PROJECT_FUNCTION in (site.unresolved_reason or "")


def plan(site: CallSite, job: Job, project: Project) -> tuple[Wrapper, list[str]] | str | None:
    """The wrapper job and its parameters; a reason it cannot be written; None: not such a site."""
    if not is_library_job(site, job):
        return None
    scan_reason = site.unresolved_reason or ""
    if site.pattern not in _SPAWNS:
        return scan_reason
    info = project.module_at(site.location.path)
    callee = _callee(site.target_source)
    if info is None or callee is None:
        return scan_reason
    where = Where(project, info, enclosing_function(info.tree, site.location.line))
    head = _head(callee)
    if (
        head not in info.imports
        or _bound_around(info.tree, site.location.line, head)
        or resolve_expr(callee, where) != job.qualname
    ):
        return (
            f"{scan_reason}: `{ast.unparse(callee)}` is not bound by a module-level import "
            "of this module, so a worker importing it would not reach the same callable"
        )
    if project.module(info.imports[head].split(".")[0]) is not None:
        return scan_reason  # a project module: its own definition is what moves
    params = _params(site)
    if isinstance(params, str):
        return f"{scan_reason}: {params}"
    name = _name(callee, info)
    return _wrapper(info, name, callee, params, site.pattern is Pattern.ASYNCIO_TASK), [
        p for p, _ in params
    ]


def _bound_around(tree: ast.Module, line: int, name: str) -> bool:
    """``name`` is bound by a function around ``line`` (a parameter, an assignment, an import)."""
    for fn in ast.walk(tree):
        if not isinstance(fn, _Def) or not fn.lineno <= line <= (fn.end_lineno or fn.lineno):
            continue
        args = fn.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if any(a is not None and a.arg == name for a in params) or assignments(fn, name):
            return True
        for node in own_nodes(fn):
            if isinstance(node, ast.Import | ast.ImportFrom) and any(
                (a.asname or a.name.split(".")[0]) == name for a in node.names
            ):
                return True
    return False


def _callee(written: str) -> ast.expr | None:
    """The callable the site hands over: ``f``, ``partial(f, ...)``, ``lambda: f(...)``, ``f(...)``."""
    try:
        expr = ast.parse(written.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(expr, ast.Call) and _last(expr.func) == "partial" and expr.args:
        expr = expr.args[0]
    elif isinstance(expr, ast.Lambda) and isinstance(expr.body, ast.Call):
        expr = expr.body.func
    elif isinstance(expr, ast.Call):
        expr = expr.func
    return expr if _head(expr) else None


def _head(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _last(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _params(site: CallSite) -> list[tuple[str, str]] | str:
    """(parameter, how the wrapper passes it) per argument of the site."""
    found: list[tuple[str, str]] = []
    taken: set[str] = set()
    for index, arg in enumerate(site.arguments):
        source = arg.source.strip()
        if source.startswith("*"):
            return "its arguments are unpacked with * or **"
        if not arg.name.startswith("#"):
            param = arg.name
            passed = f"{param}={param}"
        else:
            param = source if source.isidentifier() and source not in taken else f"arg{index}"
            passed = param
        if param in taken:
            return f"argument {param} is passed twice"
        taken.add(param)
        found.append((param, passed))
    return found


def _name(callee: ast.expr, info: ModuleInfo) -> str:
    """``_delete_from_default_storage`` for ``default_storage.delete``; ``_run_rmtree`` for ``rmtree``."""
    parts = ast.unparse(callee).split(".")
    base = f"_{parts[-1]}_from_{parts[-2]}" if len(parts) > 1 else f"_run_{parts[0]}"
    base = base.replace("__", "_")
    bound = {*info.imports, *info.assignments, *info.classes, *info.functions}
    name, n = base, 2
    while name in bound:
        name, n = f"{base}_{n}", n + 1
    return name


def _wrapper(
    info: ModuleInfo, name: str, callee: ast.expr, params: list[tuple[str, str]], coro: bool
) -> Wrapper:
    signature = ", ".join(p for p, _ in params)
    passed = ", ".join(a for _, a in params)
    written = ast.unparse(callee)
    prefix, awaited = ("async ", "await ") if coro else ("", "")
    source = (
        f"{prefix}def {name}({signature}):\n"
        f'    """`{written}` run by a worker (written by migrator)."""\n'
        f"    return {awaited}{written}({passed})\n"
    )
    return Wrapper(info.name, info.path, name, "", source)
