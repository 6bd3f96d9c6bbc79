"""The job a call site runs: a function, a partial, a lambda, a bound method, or dynamic."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from inventory._extract._args import argument
from inventory._extract._resolve import Resolver
from inventory._extract._scopes import BindingKind
from inventory._extract._source import clean
from inventory.models import Argument
from inventory.summary import ReceiverKind, TargetKind

PARTIALS = frozenset({"functools.partial", "functools.partialmethod"})
_BOUND = (ReceiverKind.SELF, ReceiverKind.INSTANCE, ReceiverKind.UNKNOWN)


@dataclass(slots=True)
class JobTarget:
    target: str | None
    kind: TargetKind
    source: str
    reason: str = ""
    arguments: list[Argument] = field(default_factory=list)  # bound by partial / lambda


def job_target(node: ast.expr, resolver: Resolver) -> JobTarget:
    source = resolver.text.segment(node)
    if isinstance(node, ast.Name | ast.Attribute):
        return _reference(node, resolver, source)
    if isinstance(node, ast.Lambda):
        return _lambda(node, resolver, source)
    if isinstance(node, ast.Call):
        return _call(node, resolver, source)
    if isinstance(node, ast.Subscript):
        return _dynamic(source, f"target is looked up in '{source}' at run time")
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
        # APScheduler accepts "package.module:function" text references.
        return JobTarget(clean(node.value.replace(":", ".")), TargetKind.FUNCTION, source)
    return _dynamic(source, f"target '{source}' is only known at run time")


def _dynamic(source: str, reason: str, arguments: list[Argument] | None = None) -> JobTarget:
    return JobTarget(None, TargetKind.DYNAMIC, source, reason, arguments or [])


def _reference(node: ast.Name | ast.Attribute, resolver: Resolver, source: str) -> JobTarget:
    if isinstance(node, ast.Name):
        binding = resolver.scope.lookup(node.id)
        if binding is not None and binding.kind is BindingKind.PARAM:
            return _dynamic(source, f"target is the parameter '{node.id}': only known at run time")
        if binding is not None and binding.kind in (BindingKind.OTHER, BindingKind.CALLABLE):
            return _dynamic(
                source, f"target is the local variable '{node.id}': only known at run time"
            )
    resolved = resolver.expr(node)
    if isinstance(node, ast.Attribute) and resolved.receiver in _BOUND:
        return JobTarget(resolved.target, TargetKind.BOUND_METHOD, source)
    if resolved.receiver is ReceiverKind.UNKNOWN:
        return _dynamic(source, f"target '{source}' is only known at run time")
    return JobTarget(resolved.target, TargetKind.FUNCTION, source)


def _lambda(node: ast.Lambda, resolver: Resolver, source: str) -> JobTarget:
    body = node.body
    if not isinstance(body, ast.Call):
        return _dynamic(source, "the lambda body is not a single call")
    inner = job_target(body.func, resolver)
    arguments = call_arguments(body.args, body.keywords, resolver)
    if inner.target is None:
        return _dynamic(source, inner.reason, arguments)
    return JobTarget(inner.target, TargetKind.LAMBDA, source, "", arguments)


def _call(node: ast.Call, resolver: Resolver, source: str) -> JobTarget:
    if isinstance(node.func, ast.Name) and node.func.id == "getattr":
        return _dynamic(source, f"target is computed by '{source}' at run time")
    callee = resolver.expr(node.func).target
    if callee not in PARTIALS or not node.args:
        return _dynamic(
            source, f"target is the result of calling '{resolver.text.segment(node.func)}'"
        )
    inner = job_target(node.args[0], resolver)
    arguments = [*inner.arguments, *call_arguments(node.args[1:], node.keywords, resolver)]
    if inner.target is None:
        return _dynamic(source, inner.reason, arguments)
    return JobTarget(inner.target, TargetKind.PARTIAL, source, "", arguments)


def call_arguments(
    args: list[ast.expr], keywords: list[ast.keyword], resolver: Resolver, start: int = 0
) -> list[Argument]:
    """Positional ones named ``#0``, ``#1``...; keywords by name; ``*x`` / ``**x`` as written."""
    found = []
    for index, node in enumerate(args, start):
        name = "*" if isinstance(node, ast.Starred) else f"#{index}"
        found.append(argument(name, node, resolver))
    for keyword in keywords:
        found.append(argument(keyword.arg or "**", keyword.value, resolver))
    return found


def packed_arguments(
    args: ast.expr | None, kwargs: ast.expr | None, resolver: Resolver
) -> list[Argument]:
    """Thread/Process/add_job style ``args=(...)`` and ``kwargs={...}``."""
    found: list[Argument] = []
    if isinstance(args, ast.Tuple | ast.List):
        found += call_arguments(args.elts, [], resolver)
    elif args is not None:
        found.append(argument("*args", args, resolver))
    names = _text_keys(kwargs.keys) if isinstance(kwargs, ast.Dict) else None
    if isinstance(kwargs, ast.Dict) and names is not None:
        found += [argument(name, v, resolver) for name, v in zip(names, kwargs.values, strict=True)]
    elif kwargs is not None:
        found.append(argument("**kwargs", kwargs, resolver))
    return found


def _text_keys(keys: list[ast.expr | None]) -> list[str] | None:
    """The keys of ``{"a": ..., "b": ...}``, or None when one is not a string literal."""
    names = [k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return names if len(names) == len(keys) else None
