"""Reads of the request being served through a context-local proxy.

Flask's ``request`` and ``session`` (Quart's too, and its ``websocket``) are proxies to the
request context of the current thread or task, and Flask-Login's ``current_user`` is the
user that context loaded ("Working outside of request context" when there is none, their
documentation says); django-crum's ``get_current_request()`` / ``get_current_user()`` read
what its middleware stored for the request being served. A function reading one of them
works only while that request is served by the process running it: a worker serves no
request (under a test request it would read a blank one), so a job that reads one fails
there, or reads values that are not the caller's. Flask's ``g`` lives in the application
context a worker pushes too, but it is filled per request (``g.user`` by a
``before_request`` hook): a read of an attribute of ``g`` the function does not itself set
is a read of the request (``g.db`` set when missing, Flask's tutorial's ``get_db()``, is
the function's own memo).

Each read is a ``REQUEST_READ`` fact (the proxy as ``target``, ``flask.g.user`` for ``g``),
one per proxy per function; the classifier reads it as a ``request_read`` effect, and
``migrator apply`` leaves a job that has one where it is (pass what it reads as an
argument).
"""

from __future__ import annotations

import ast

from inventory._extract._resolve import Resolver
from inventory._extract._source import SourceText, span_of
from inventory._extract.values._process_state import FunctionNode, own_nodes
from inventory.summary import Fact, FactKind

REQUEST_PROXIES = frozenset(
    {
        "flask.request",
        "flask.session",
        "flask.globals.request",
        "flask.globals.session",
        "quart.request",
        "quart.session",
        "quart.websocket",
        "quart.globals.request",
        "quart.globals.session",
        "quart.globals.websocket",
        "flask_login.current_user",
        "flask_login.utils.current_user",
        "crum.get_current_request",
        "crum.get_current_user",
    }
)
APP_GLOBALS = frozenset({"flask.g", "flask.globals.g", "quart.g", "quart.globals.g"})
_MODULES = frozenset({"flask", "quart", "flask_login", "crum"})
_G_READS = frozenset({"get", "pop"})  # ``g.get("user")``: reads the attribute named


def request_names(imports: dict[str, str]) -> frozenset[str]:
    """The names a module binds by import to a request proxy, to ``g``, or to the modules
    offering them (``flask`` for ``flask.request``): a function using none is not read."""
    return frozenset(
        name
        for name, target in imports.items()
        if target in REQUEST_PROXIES or target in APP_GLOBALS or target in _MODULES
    )


def request_read_facts(
    node: FunctionNode,
    resolver: Resolver,
    text: SourceText,
    written: frozenset[str],
    names: frozenset[str],
) -> list[Fact]:
    """The function's own reads of the request being served (see the module); ``written``:
    the proxies it changes (a ``REQUEST_STATE`` fact says so already); ``names``: the
    module's :func:`request_names` (only a name or chain rooted at one is resolved)."""
    body = list(own_nodes(node))
    g_set = _g_attributes_set(body, resolver)
    # ``session["user"] = x`` writes the session (a REQUEST_STATE fact), it reads nothing
    stored = {
        id(item.value)
        for item in body
        if isinstance(item, ast.Subscript | ast.Attribute)
        and isinstance(item.ctx, ast.Store | ast.Del)
    }
    called = {id(item.func): item for item in body if isinstance(item, ast.Call)}
    facts: dict[str, Fact] = {}
    for item in body:
        if not isinstance(item, ast.Name | ast.Attribute) or not isinstance(item.ctx, ast.Load):
            continue
        if id(item) in stored or _root(item) not in names:
            continue
        read = _read(item, resolver, g_set, called)
        if read is not None and read not in facts and read not in written:
            facts[read] = Fact(
                kind=FactKind.REQUEST_READ,
                span=span_of(item),
                text=text.segment(item, 80),
                target=read,
            )
    return list(facts.values())


def _root(item: ast.expr) -> str | None:
    while isinstance(item, ast.Attribute):
        item = item.value
    return item.id if isinstance(item, ast.Name) else None


def _read(
    item: ast.Name | ast.Attribute,
    resolver: Resolver,
    g_set: frozenset[str],
    called: dict[int, ast.Call],
) -> str | None:
    """The request proxy ``item`` reads (``flask.g.user`` for an attribute of ``g`` the
    function does not set itself), else None."""
    proxy = resolver.dotted(item)
    if proxy in REQUEST_PROXIES:
        return proxy
    if not isinstance(item, ast.Attribute):
        return None
    holder = resolver.dotted(item.value)
    if holder not in APP_GLOBALS:
        return None
    attr = _g_attribute(item, called.get(id(item)))
    return None if attr is None or attr in g_set else f"{holder}.{attr}"


def _g_attribute(item: ast.Attribute, call: ast.Call | None) -> str | None:
    """``g.user`` -> "user"; ``g.get("user")`` (``call``: the call of ``item``) -> "user";
    None for other uses of ``g``."""
    if item.attr not in _G_READS:
        return None if item.attr.startswith("__") else item.attr
    if (
        call is not None
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        return call.args[0].value
    return None


def _g_attributes_set(body: list[ast.AST], resolver: Resolver) -> frozenset[str]:
    """What the function sets on ``g`` itself: ``g.db = connect()``, ``setattr(g, "db", x)``,
    ``g.setdefault("db", x)``."""
    found: set[str] = set()
    for item in body:
        if (
            isinstance(item, ast.Attribute)
            and isinstance(item.ctx, ast.Store | ast.Del)
            and resolver.dotted(item.value) in APP_GLOBALS
        ):
            found.add(item.attr)
        elif isinstance(item, ast.Call) and item.args:
            first = item.args[0]
            func = item.func
            named = (
                isinstance(func, ast.Name)
                and func.id == "setattr"
                and len(item.args) > 1
                and resolver.dotted(first) in APP_GLOBALS
            )
            setdefault = (
                isinstance(func, ast.Attribute)
                and func.attr == "setdefault"
                and resolver.dotted(func.value) in APP_GLOBALS
            )
            key = item.args[1] if named else first if setdefault else None
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
    return frozenset(found)
