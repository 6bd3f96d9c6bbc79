"""Where a Flask or Django handler's status endpoint can go, or None when that is not proven.

Flask: the view is a module-level function routed with ``@owner.route(...)``
(or ``.get``/``.post``...), or a method of a ``MethodView`` registered with
``owner.add_url_rule(..., view_func=View.as_view(...))`` in the same module,
where ``owner`` is the module's only route owner and is bound there to
``Flask(...)`` or ``Blueprint(...)``. The status view then joins that owner,
and the relative endpoint ``.job_status`` finds it from the view.

Django: the view (a function, or a method of a class-based view) is routed by
the ``urls.py`` beside its module, whose ``urlpatterns`` is a list literal and
which imports from ``django.urls`` (Django 2+: ``path`` exists). Because that
``urls.py`` routes the view, it is in the URLconf whenever the view answers,
so the status pattern added to it can be reversed there.

Any name the new code binds (``job_status``, the response helpers) must be
free or already the one it means; otherwise the site stays manual.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import TypeGuard

from codemods._project import ModuleInfo, Project, enclosing_function, module_name
from codemods._types import StatusRoute
from inventory.models import CallSite, Framework

VIEW = "job_status"  # the status view's name: a function (Flask) or a module and function (Django)
FLASK_RULE = "/jobs/<int:job_id>"
MARKER = "added by `migrator apply`"  # in the docstring of every generated status view
_ROUTES = frozenset({"route", "get", "post", "put", "patch", "delete"})
_OWNERS = frozenset({"Flask", "Blueprint"})
_FLASK_NAMES = {"jsonify": "flask.jsonify", "url_for": "flask.url_for"}
_DJANGO_NAMES = {"JsonResponse": "django.http.JsonResponse", "reverse": "django.urls.reverse"}

_Def = ast.FunctionDef | ast.AsyncFunctionDef


def find(site: CallSite, project: Project) -> StatusRoute | None:
    """The status route for ``site``'s handler (Flask or Django), if one can be placed safely."""
    info = project.module_at(site.location.path)
    func = enclosing_function(info.tree, site.location.line) if info is not None else None
    if info is None or func is None or not _only_returned(func, site):
        return None
    if site.handler is Framework.FLASK:
        return _flask(info, func, site.location.path)
    if site.handler is Framework.DJANGO:
        return _django(info, func, site.location.path, project)
    return None


def _only_returned(func: _Def, site: CallSite) -> bool:
    """The site is an assignment or a return, and every line reading the result is a return.

    Anything else (a condition, a flash, a log line) decides what the user is
    told: the site stays manual, with those lines. The rewrite checks the exact
    shape again.
    """
    stmts = [n for n in ast.walk(func) if isinstance(n, ast.stmt) and n is not func]
    lines = [site.location.line, *site.result_use_lines]
    at = [n for n in stmts if _spans(n, site.location.line)]
    if not at or not isinstance(max(at, key=lambda n: n.lineno), ast.Assign | ast.Return):
        return False
    returns = [n for n in stmts if isinstance(n, ast.Return)]
    return all(any(_spans(r, line) for r in returns) for line in lines[1:])


def _spans(node: ast.stmt, line: int) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _flask(info: ModuleInfo, func: _Def, path: str) -> StatusRoute | None:
    owners = {o for o in map(_decorator_owner, _top_functions(info)) if o} | set(_url_rules(info))
    if len(owners) != 1 or not _names_free(info, _FLASK_NAMES):
        return None
    [owner] = owners
    if not _binds_owner(info, owner) or not _flask_view_free(info, owner):
        return None
    routed = info.functions.get(func.name) is func and _decorator_owner(func) == owner
    view_class = _class_of(info, func)
    if not routed and (view_class is None or view_class not in _url_rules(info).get(owner, ())):
        return None
    return StatusRoute(Framework.FLASK, path, owner, f".{VIEW}", info.text)


def _top_functions(info: ModuleInfo) -> list[_Def]:
    return list(info.functions.values())


def _decorator_owner(func: _Def) -> str | None:
    """``app`` of ``@app.route(...)`` / ``@app.post(...)``; None without such a decorator."""
    for decorator in func.decorator_list:
        call = decorator.func if isinstance(decorator, ast.Call) else None
        if (
            isinstance(call, ast.Attribute)
            and call.attr in _ROUTES
            and isinstance(call.value, ast.Name)
        ):
            return call.value.id
    return None


def _url_rules(info: ModuleInfo) -> dict[str, list[str]]:
    """Owner -> the classes it routes with ``owner.add_url_rule(..., view_func=C.as_view(...))``."""
    found: dict[str, list[str]] = {}
    for stmt in info.tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if call.func.attr == "add_url_rule" and isinstance(call.func.value, ast.Name):
            classes = found.setdefault(call.func.value.id, [])
            nodes: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
            classes += [c for c in map(_as_view_class, nodes) if c]
    return found


def _as_view_class(node: ast.expr | ast.keyword) -> str | None:
    value = node.value if isinstance(node, ast.keyword) else node
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr == "as_view":
        return func.value.id if isinstance(func.value, ast.Name) else None
    return None


def _binds_owner(info: ModuleInfo, owner: str) -> bool:
    value = info.assignments.get(owner)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute):
        return func.attr in _OWNERS
    return isinstance(func, ast.Name) and func.id in _OWNERS


def _flask_view_free(info: ModuleInfo, owner: str) -> bool:
    """``job_status`` is unbound, or is the status view a first run added to ``owner``."""
    if VIEW in info.imports or VIEW in info.assignments or VIEW in info.classes:
        return False
    existing = info.functions.get(VIEW)
    return existing is None or (
        _decorator_owner(existing) == owner and MARKER in (ast.get_docstring(existing) or "")
    )


def _class_of(info: ModuleInfo, func: _Def) -> str | None:
    """The top-level class ``func`` is a method of."""
    for name, cls in info.classes.items():
        if func in cls.body:
            return name
    return None


def _names_free(info: ModuleInfo, wanted: dict[str, str]) -> bool:
    """Each helper name is unbound in the module, or imported from where the new code means."""
    for name, origin in wanted.items():
        if name in info.assignments or name in info.functions or name in info.classes:
            return False
        if info.imports.get(name, origin) != origin:
            return False
    return True


def _django(info: ModuleInfo, func: _Def, path: str, project: Project) -> StatusRoute | None:
    view = func.name if info.functions.get(func.name) is func else _class_of(info, func)
    urls_path = (PurePosixPath(path).parent / "urls.py").as_posix()
    urls = project.module(module_name(urls_path))
    if view is None or urls is None or urls.path != urls_path:
        return None
    patterns = urls.assignments.get("urlpatterns")
    package = module_name(urls_path).rpartition(".")[0] or None
    ours = f"{package}.{VIEW}" if package else VIEW
    if not _plain_list(patterns, urls) or not _routes(patterns, view, urls, module_name(path)):
        return None
    if not _uses_django_urls(urls) or urls.imports.get(VIEW, ours) != ours:
        return None
    existing = project.module(ours)
    generated = existing is not None and MARKER in (ast.get_docstring(existing.tree) or "")
    if not _names_free(info, _DJANGO_NAMES) or (existing is not None and not generated):
        return None
    name = _namespace(urls) + VIEW
    return StatusRoute(Framework.DJANGO, urls_path, package, name, urls.text, generated)


def _routes(patterns: ast.List, view: str, urls: ModuleInfo, views: str) -> bool:
    """``urlpatterns`` names the view (``views.x``, ``x``, ``X.as_view()``) of the view's module."""
    imported = urls.imports.values()
    if not any(t == views or t.startswith(f"{views}.") for t in imported):
        return False
    for node in ast.walk(patterns):
        if isinstance(node, ast.Name) and node.id == view:
            return True
        if isinstance(node, ast.Attribute) and node.attr == view:
            return True
    return False


def _plain_list(patterns: ast.expr | None, urls: ModuleInfo) -> TypeGuard[ast.List]:
    """``urlpatterns = [...]`` at the top level (the last binding): a list to append to."""
    return isinstance(patterns, ast.List) and any(
        isinstance(stmt, ast.Assign) and stmt.value is patterns for stmt in urls.tree.body
    )


def _uses_django_urls(urls: ModuleInfo) -> bool:
    return any(target.startswith("django.urls.") for target in urls.imports.values())


def _namespace(urls: ModuleInfo) -> str:
    """``orders:`` when the urls module sets ``app_name = "orders"``, else nothing."""
    app_name = urls.assignments.get("app_name")
    if isinstance(app_name, ast.Constant) and isinstance(app_name.value, str):
        return f"{app_name.value}:"
    return ""
