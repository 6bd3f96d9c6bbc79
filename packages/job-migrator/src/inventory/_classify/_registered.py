"""Views registered in one module and defined in another become request handlers.

Each file records the views it registers (``FileSummary.routes`` and ``view_classes``: a URLconf's
``path("signup/", views.signup)``, an app factory's ``add_url_rule(..., view_func=...)``,
``router.register("orders", OrderViewSet)``, ``Route("/", Home)``). Here those names are
resolved across modules (re-exports included): a function becomes a handler of the
framework that registered it; for a class, the methods its framework hands a request to
(HTTP verbs, DRF actions and hooks, ``dispatch_request``: ``VIEW_METHODS``; for Django, the
hooks its generic views call in the request: ``FRAMEWORK_VIEW_HOOKS``), found on the
class or inherited from a project base. What a handler reaches (its calls on ``self``
included) is then reported the same way as for a decorated handler: only where slow work
is reached, once per call of the handler. A name that resolves to a library view, or to nothing, adds nothing.
Code installed to run in each request (Django's settings, Starlette's and FastAPI's
``add_middleware``: ``FileSummary.installed``) is resolved the same way, its class's hooks
(``_installed.HOOKS``: a middleware's ``dispatch``, not an HTTP verb) becoming handlers.
"""

from __future__ import annotations

from inventory._classify._index import Resolved, SymbolIndex, SymbolKind
from inventory._extract.detectors._handlers import (
    FALCON_RESPONDERS,
    FRAMEWORK_VIEW_HOOKS,
    VIEW_METHODS,
)
from inventory._extract.detectors._installed import FACTORIES, FRAMEWORK, HOOKS, Installed
from inventory.models import Framework
from inventory.summary import FileSummary

__all__ = ["mark_handlers", "register_handlers"]


def register_handlers(summaries: list[FileSummary], index: SymbolIndex) -> None:
    """Mark the functions registered views reach as handlers, and the sites inside them."""
    marked: dict[str, Framework] = {}
    for summary in summaries:
        for name, framework in summary.routes.items():
            for function in _handlers_of(index, name, classes=False):
                _mark(index, function, framework, marked)
        for name, framework in summary.view_classes.items():
            for function in _handlers_of(index, name, classes=True, framework=framework):
                _mark(index, function, framework, marked)
        for name, value in summary.installed.items():
            kind = Installed(value)
            for function in _installed(index, name, kind):
                _mark(index, function, FRAMEWORK.get(kind, Framework.DJANGO), marked)
    _mark_sites(summaries, marked)


def mark_handlers(
    summaries: list[FileSummary], index: SymbolIndex, functions: list[str], framework: Framework
) -> None:
    """Mark ``functions`` as handlers of ``framework`` (and the sites inside them): what a
    registration elsewhere makes the framework run in a request (``_admin.admin_saved``)."""
    marked: dict[str, Framework] = {}
    for function in functions:
        _mark(index, function, framework, marked)
    _mark_sites(summaries, marked)


def _mark_sites(summaries: list[FileSummary], marked: dict[str, Framework]) -> None:
    for summary in summaries:
        for site in summary.sites:
            if site.handler is None and site.enclosing_function in marked:
                site.handler = marked[site.enclosing_function]


def _handlers_of(
    index: SymbolIndex, name: str, *, classes: bool, framework: Framework | None = None
) -> list[str]:
    found = _resolve(index, name)
    if found.kind is SymbolKind.FUNCTION:
        return [found.name]
    if found.kind is not SymbolKind.CLASS or not classes:
        return []
    if framework is Framework.FALCON:
        return _methods_of(index, found.name, FALCON_RESPONDERS)  # a resource's responders
    hooks = FRAMEWORK_VIEW_HOOKS if framework is Framework.DJANGO else frozenset()
    return _methods_of(index, found.name, VIEW_METHODS | hooks)


def _installed(index: SymbolIndex, name: str, kind: Installed) -> list[str]:
    """What the framework runs in the request of the code a setting or ``add_middleware``
    names: a class's hooks (``HOOKS``), inherited ones included; a function itself (a context
    processor), or, for a middleware factory (called once at start-up), the functions
    defined inside it, one of which it returns to be called with each request."""
    found = _resolve(index, name)
    if found.kind is SymbolKind.CLASS and kind in HOOKS:
        return _methods_of(index, found.name, HOOKS[kind])
    if found.kind is not SymbolKind.FUNCTION:
        return []
    if kind not in FACTORIES:
        return [found.name]
    inner = f"{found.name}.<locals>."
    return [f for f in index.functions if f.startswith(inner) and "." not in f[len(inner) :]]


def _methods_of(index: SymbolIndex, cls: str, names: frozenset[str]) -> list[str]:
    """The methods of ``cls`` (its own or inherited from a project base) named in ``names``."""
    methods = (index.method(cls, name) for name in sorted(names))
    return [m for m in methods if m is not None]


def _resolve(index: SymbolIndex, name: str) -> Resolved:
    """``views.signup`` where ``views/__init__.py`` does ``from .signup import signup``: the
    import rebinds the package's attribute from the submodule to the function."""
    found = index.resolve(name)
    if found.kind is SymbolKind.MODULE:
        package, _, last = name.rpartition(".")
        summary = index.modules.get(package)
        rebound = summary.imports.get(last) if summary is not None else None
        if rebound is not None and rebound != name:
            return index.resolve(rebound)
    return found


def _mark(
    index: SymbolIndex, function: str, framework: Framework, marked: dict[str, Framework]
) -> None:
    info = index.functions.get(function)
    if info is None or info.handler is not None:
        return
    info.handler = framework
    marked[function] = framework
