"""What a caller relies on around a call: ``try``/``except`` blocks and Django transactions.

A call inside ``try:`` hands what it raises to the handlers (a message to the user, a
fallback); one inside ``transaction.atomic`` rolls back what the transaction wrote when it
raises. Once the call is an enqueue it raises none of that: the handler never runs, the rows
stay. The scan records the blocks per function (``FunctionInfo.guards``) and, per module, the
settings entries turning Django's ``ATOMIC_REQUESTS`` on (every view then runs in
``atomic``); the classifier gives each site the ones around it
(``CallSite.surroundings``), which ``migrator apply`` reads.

Read by name, as Django spells them: ``atomic``, ``transaction.atomic``, called or not
(``@atomic(durable=True)``). Settings are read as written: a value that is not a literal
``False`` (or a module-level name bound to one) counts as on.
"""

from __future__ import annotations

import ast

from inventory._extract._library import LOG_METHODS
from inventory._extract._nodes import own_nodes
from inventory.summary import Guard, GuardKind

SETTING = "ATOMIC_REQUESTS"


def guards(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Guard]:
    """The function's own ``try`` and ``with atomic()`` blocks (not a nested def's: that
    def records its own), and an ``@atomic`` decorator (the whole function)."""
    found: list[Guard] = []
    atomic = [d.lineno for d in node.decorator_list if named(d, "atomic")]
    if atomic:
        found.append(Guard(kind=GuardKind.ATOMIC, first=node.lineno, last=_end(node), lines=atomic))
    for part in own_nodes(node):
        if isinstance(part, ast.Try | ast.TryStar) and part.body:
            # with an ``else:`` (run only when the body raised nothing) the block tells success
            # from failure: a clause that only logs still decides which branch runs
            handlers = [
                h.lineno
                for h in part.handlers
                if not (_reraises(h) or (not part.orelse and handles_nothing(h)))
            ]
            if handlers:
                first, last = part.body[0].lineno, _end(part.body[-1])
                found.append(Guard(kind=GuardKind.CAUGHT, first=first, last=last, lines=handlers))
        elif isinstance(part, ast.With | ast.AsyncWith) and part.body and _atomic(part):
            first, last = part.body[0].lineno, _end(part.body[-1])
            found.append(Guard(kind=GuardKind.ATOMIC, first=first, last=last, lines=[part.lineno]))
    return sorted(found, key=lambda g: (g.first, g.kind))


def atomic_requests(tree: ast.Module, source: str) -> list[int]:
    """Lines turning ``ATOMIC_REQUESTS`` on: ``{"ATOMIC_REQUESTS": v}``,
    ``dict(ATOMIC_REQUESTS=v)``, ``DATABASES["default"]["ATOMIC_REQUESTS"] = v``."""
    if SETTING not in source:
        return []
    falsy = _false_names(tree)
    lines: list[int] = []
    for node in ast.walk(tree):
        values: list[ast.expr] = []
        if isinstance(node, ast.Dict):
            values = [v for k, v in zip(node.keys, node.values, strict=True) if _is(k, SETTING)]
        elif isinstance(node, ast.Call):
            values = [k.value for k in node.keywords if k.arg == SETTING]
        elif isinstance(node, ast.Assign):
            hit = any(isinstance(t, ast.Subscript) and _is(t.slice, SETTING) for t in node.targets)
            values = [node.value] if hit else []
        lines += [v.lineno for v in values if not _false(v, falsy)]
    return sorted(set(lines))


def named(expr: ast.expr, name: str) -> bool:
    """``atomic``, ``transaction.atomic``, ``transaction.atomic(...)``."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    found = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return bool(found == name)


def _atomic(node: ast.With | ast.AsyncWith) -> bool:
    return any(named(item.context_expr, "atomic") for item in node.items)


# The logging API's methods, and ``fatal`` (an alias of ``critical``).
_LOG_METHODS = LOG_METHODS | {"fatal"}
# Names a logger goes by: ``logger``, ``log``, ``_LOGGER``, ``app.logger``, ``logging``,
# ``audit_log`` (``endswith``: ``request_logger``, ``_log``).
_LOGGERS = frozenset({"log", "logging"})
_LOGGER_ENDINGS = ("logger", "_log")
# Calls that only report an exception: print it, or hand it to an error tracker.
_REPORTS = frozenset(
    {
        "print",
        "traceback.print_exc",
        "traceback.print_exception",
        "sentry_sdk.capture_exception",
        "sentry_sdk.capture_message",
    }
)


def handles_nothing(handler: ast.ExceptHandler) -> bool:
    """``except X: pass``, ``except X: logger.exception("...")``, then perhaps ``raise``:
    the clause only records the failure (a log line, a print, an error tracker) and goes
    on as the ``try`` would have gone on without it (or re-raises), so, in a ``try``
    without ``else``, what follows the block runs the same whether the call failed or not.
    A clause with any other statement (a return, an assignment, a message to the user,
    ``continue``, another call) handles the failure."""
    body = handler.body
    if isinstance(body[-1], ast.Raise) and body[-1].exc is None:
        body = body[:-1]  # re-raised: the caller's caller handles it, if anyone
    return all(_records_only(stmt) for stmt in body)


def _reraises(handler: ast.ExceptHandler) -> bool:
    """``except X: raise``: the failure goes on to the caller's caller."""
    body = handler.body
    return len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is None


def _records_only(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if not isinstance(stmt, ast.Expr):
        return False
    value = stmt.value
    if isinstance(value, ast.Constant):
        return True  # a docstring or ``...``
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id in _REPORTS
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    logger = name.lower()
    if func.attr in _LOG_METHODS and (logger in _LOGGERS or logger.endswith(_LOGGER_ENDINGS)):
        return True
    return isinstance(owner, ast.Name) and f"{owner.id}.{func.attr}" in _REPORTS


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _is(node: ast.expr | None, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _false_names(tree: ast.Module) -> set[str]:
    """Module-level names last bound to a literal ``False`` (``ATOMIC = False``)."""
    bound: dict[str, bool] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name):
            bound[target.id] = isinstance(value, ast.Constant) and value.value is False
    return {name for name, falsy in bound.items() if falsy}


def _false(value: ast.expr, falsy: set[str]) -> bool:
    if isinstance(value, ast.Name):
        return value.id in falsy
    return isinstance(value, ast.Constant) and value.value is False
