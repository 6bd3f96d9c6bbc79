"""One call expression as a :class:`CallInfo`."""

from __future__ import annotations

import ast

from inventory._extract._resolve import Resolved, Resolver, public_name
from inventory._extract._scopes import SPREAD, BindingKind
from inventory._extract._source import SourceText, clean, span_of
from inventory._extract.values._values import class_of
from inventory.summary import EXPR, FUNCTION_CALLS, ArgValue, CallInfo

Literal = ArgValue
_LITERAL_TYPES = (str, int, float, bool, type(None))


def literal(node: ast.expr) -> Literal:
    """The value of a literal argument, ``"<expr>"`` for anything else."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, _LITERAL_TYPES):
            return clean(value[:200]) if isinstance(value, str) else value
        return EXPR
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value
    return EXPR


def call_info(
    node: ast.Call,
    resolved: Resolved,
    used: bool,
    module: str,
    text: SourceText,
    failure_path: bool = False,
) -> CallInfo:
    """``uses_param`` is filled by the walker while it visits the arguments;
    ``failure_path``: the call is written in an ``except`` handler of its function."""
    args = [literal(a) for a in node.args]
    kwargs = {(k.arg or "**"): literal(k.value) for k in node.keywords}
    return CallInfo(
        target=public_name(resolved.target, module),
        receiver=resolved.receiver,
        receiver_source=resolved.receiver_source,
        receiver_param=resolved.receiver_param,
        span=span_of(node),
        args=args,
        arg_sources=[text.source(a) for a in node.args],
        kwargs=kwargs,
        kwarg_sources={(k.arg or "**"): text.source(k.value) for k in node.keywords},
        result_used=used,
        returned_from=public_name(resolved.returned, module),
        receiver_declared=resolved.declared,
        receiver_made_at=resolved.made_at,
        receiver_loaded=resolved.loaded,
        failure_path=failure_path,
    )


def typed_arguments(node: ast.Call, resolver: Resolver, module: str, info: CallInfo) -> None:
    """Fill ``info``'s argument types (positional and keyword) and the arguments that are
    an unannotated parameter of the enclosing function (``arg_params``): what the
    classifier types a callee's parameters with (``_classify/_arguments.py``)."""
    info.arg_types = argument_types(node.args, resolver, module)
    keywords = [k for k in node.keywords if k.arg is not None]
    kinds = {k.arg: class_of(k.value, resolver, module) for k in keywords}
    info.kwarg_types = {k: t for k, t in kinds.items() if k and t}
    params = [_parameter_of(a, resolver) for a in node.args]
    info.arg_params = params if any(params) else []
    named = {k.arg: _parameter_of(k.value, resolver) for k in keywords}
    info.kwarg_params = {k: p for k, p in named.items() if k and p}
    callables = [_callable_of(a, resolver, module) for a in node.args]
    info.arg_callables = callables if any(callables) else []
    named_callables = {k.arg: _callable_of(k.value, resolver, module) for k in keywords}
    info.kwarg_callables = {k: c for k, c in named_callables.items() if k and c}
    spread = [k.value for k in node.keywords if k.arg is None]
    if len(spread) == 1 and isinstance(spread[0], ast.Name):
        known = resolver.scope.lookup(f"{spread[0].id}{SPREAD}")
        if known is not None:  # ``Model(**kw)`` with ``kw = {"name": n}`` in the function
            info.spread_keys = known.target.split(",") if known.target else []


_NAMED_CALLABLES = (BindingKind.FUNCTION, BindingKind.IMPORT)


def _callable_of(node: ast.expr, resolver: Resolver, module: str) -> str:
    """``post_hook`` (a def of this module, or an imported name) or ``hooks.post`` (a
    module's function): the dotted name of the function handed over; ``notify(url)``, a
    call of such a function, gives its name and ``()`` (a coroutine function's call hands
    over the coroutine, which runs the function's body where it is awaited); "" for
    anything else (a class, a local, a parameter, a bound method: what they hold is not
    named here). The classifier checks the name is a project function (and, for a call,
    an ``async def``)."""
    if isinstance(node, ast.Call):
        called = _callable_of(node.func, resolver, module)
        return f"{called}()" if called else ""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return ""
    binding = resolver.scope.lookup(root.id)
    if binding is None or binding.kind not in _NAMED_CALLABLES:
        return ""
    if root is not node and binding.kind is not BindingKind.IMPORT:
        return ""  # ``f.attr``: an attribute of a function, not a function
    resolved = resolver.expr(node)
    if resolved.receiver not in FUNCTION_CALLS or not resolved.target:
        return ""
    return public_name(resolved.target, module)


def _parameter_of(node: ast.expr, resolver: Resolver) -> str:
    """``order`` (an unannotated parameter), ``o`` after ``o = order``, or
    ``kwargs["instance"]``: the parameter (or ``**`` key) it is; "" for anything else."""
    if isinstance(node, ast.Name):
        binding = resolver.scope.lookup(node.id)
        if binding is not None and binding.kind in (BindingKind.SELF, BindingKind.CLS):
            return ""
    if not isinstance(node, ast.Name | ast.Subscript | ast.Call):
        return ""
    root = resolver.param_root(node)
    return root if root.isidentifier() else ""


def argument_types(args: list[ast.expr], resolver: Resolver, module: str) -> list[str]:
    """The class of each positional argument that is a name of a known class ("" for the
    others): ``session.execute(stmt)`` does what the statement ``stmt`` was built as.
    An argument made by a function whose module is another file keeps the name of that
    call (``pkg.queries.build()``, ``pkg.queries.build().order_by()``, see
    ``values.argument_type``): the classifier types it once it has read what ``build``
    returns (``_classify/_statements.py``)."""
    found = [class_of(a, resolver, module) for a in args]
    return found if any(found) else []
