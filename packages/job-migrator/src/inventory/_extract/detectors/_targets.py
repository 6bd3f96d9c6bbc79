"""The job a call site runs: a function, a partial, a lambda, a bound method, or dynamic.

Wrappers that only change how the callable is called unwrap to it: ``partial(f, x)``,
``partial(partial(f, x), y)``, a contextvars ``ctx.run`` (``partial(ctx.run, f)``,
``lambda: ctx.run(f, x)``). A local variable holding such a callable
(``func = partial(f, x)`` then ``submit(func)``) is followed when every binding of the
name in the function is a plain assignment of a callable that resolves to the same job.
A name bound by ``with manager(...) as name`` holds what the context manager gives: the site
names the manager (``TargetKind.YIELDED``), and the classifier looks up what it yields
(``FunctionInfo.yields_callable``, read here by :func:`yielded_callable`).
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field, replace

from inventory._extract._nodes import own_nodes
from inventory._extract._resolve import Resolver, public_name
from inventory._extract._scopes import BRANCHED, BindingKind, Scope, ScopeKind
from inventory._extract._source import SourceText, clean
from inventory._extract.values._args import argument
from inventory._extract.values._values import PARTIALS
from inventory.models import Argument
from inventory.summary import FUNCTION_CALLS, ReceiverKind, TargetKind

_BOUND = (ReceiverKind.SELF, ReceiverKind.INSTANCE, ReceiverKind.UNKNOWN)
# ``Context.run(f, *args)`` calls ``f`` inside a copy of the context variables.
_CONTEXT_RUN = frozenset({"contextvars.Context.run", "contextvars.copy_context().run"})
_CONTEXT = "contextvars.copy_context()"  # what an untyped ``ctx = copy_context()`` holds
_LOCALS = (BindingKind.OTHER, BindingKind.CALLABLE)
_MAX_DEPTH = 8  # local callables built from local callables...
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_MANAGERS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})
_ENTERED = "bound to what a with statement's context manager gives"
_CALL_RESULT = re.compile(r"[\w.]+\(\)")  # ``pkg.make()``: what a named callable returns


@dataclass(slots=True)
class JobTarget:
    target: str | None
    kind: TargetKind
    source: str
    reason: str = ""
    arguments: list[Argument] = field(default_factory=list)  # bound by partial / lambda
    # A bound method ``?.m`` of a receiver that is what a call returned (``m = make(); Thread(
    # target=m.run)``): that call (``pkg.make()``), for the index to type (RawSite.returned_from).
    returned: str = ""
    # The parameter of the enclosing function the callable is or wraps (``func``,
    # ``partial(func, x)``, ``lambda: ctx.run(func)``, a local bound to one of them): what
    # makes the function a spawn wrapper, whose callers name the job (``_classify._wrappers``
    # reads it from the source, written here rooted at the parameter).
    param: str = ""


def job_target(node: ast.expr, resolver: Resolver, depth: int = 0) -> JobTarget:
    source = resolver.text.segment(node)
    if isinstance(node, ast.Name | ast.Attribute):
        return _reference(node, resolver, source, depth)
    if isinstance(node, ast.Lambda):
        return _lambda(node, resolver, source, depth)
    if isinstance(node, ast.Call):
        return _call(node, resolver, source, depth)
    if isinstance(node, ast.Subscript):
        return _dynamic(source, f"target is looked up in '{source}' at run time")
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
        # APScheduler accepts "package.module:function" text references.
        return JobTarget(clean(node.value.replace(":", ".")), TargetKind.FUNCTION, source)
    return _dynamic(source, f"target '{source}' is only known at run time")


@dataclass(frozen=True, slots=True)
class _Entered:
    """A binding by ``with <manager> as name``."""

    manager: ast.expr


def _dynamic(
    source: str, reason: str, arguments: list[Argument] | None = None, param: str = ""
) -> JobTarget:
    return JobTarget(None, TargetKind.DYNAMIC, source, reason, arguments or [], param=param)


def _reference(
    node: ast.Name | ast.Attribute, resolver: Resolver, source: str, depth: int
) -> JobTarget:
    if isinstance(node, ast.Name):
        binding = resolver.scope.lookup(node.id)
        if binding is not None and binding.kind is BindingKind.PARAM:
            reason = f"target is the parameter '{node.id}': only known at run time"
            return _dynamic(source, reason, param=node.id)
        if binding is not None and (binding.kind in _LOCALS or _rebound(node, resolver)):
            return _local(node, resolver, source, depth)
    if isinstance(node, ast.Name) and _branched(node.id, resolver):
        reason = f"target '{node.id}' is bound by more than one statement of the module, in a block"
        return _dynamic(
            source, f"{reason} (an if, a try): which one holds is only known at run time"
        )
    if _context_run(node, resolver):
        return _dynamic(source, f"'{source}' runs the function handed to it after it")
    resolved = resolver.expr(node)
    if isinstance(node, ast.Attribute) and resolved.receiver in _BOUND:
        returned = resolved.returned if _CALL_RESULT.fullmatch(resolved.returned) else ""
        return JobTarget(resolved.target, TargetKind.BOUND_METHOD, source, returned=returned)
    if resolved.receiver is ReceiverKind.UNKNOWN:
        return _dynamic(source, f"target '{source}' is only known at run time")
    return JobTarget(resolved.target, TargetKind.FUNCTION, source)


def _lambda(node: ast.Lambda, resolver: Resolver, source: str, depth: int) -> JobTarget:
    body = node.body
    if not isinstance(body, ast.Call):
        return _dynamic(source, "the lambda body is not a single call")
    args = body.args
    if args and not isinstance(args[0], ast.Starred) and _context_run(body.func, resolver):
        # ``lambda: ctx.run(f, x)`` calls ``f(x)``
        inner = job_target(args[0], resolver, depth + 1)
        args = args[1:]
        if inner.param:  # written as what it runs: ``lambda: f(x)``
            source = f"lambda: {inner.source}({_written(args, body.keywords, resolver)})"
    else:
        inner = job_target(body.func, resolver, depth + 1)
    arguments = call_arguments(args, body.keywords, resolver)
    if inner.target is None:
        return _dynamic(source, inner.reason, arguments, inner.param)
    kind = TargetKind.YIELDED if inner.kind is TargetKind.YIELDED else TargetKind.LAMBDA
    return JobTarget(inner.target, kind, source, "", arguments, returned=inner.returned)


def _call(node: ast.Call, resolver: Resolver, source: str, depth: int) -> JobTarget:
    if isinstance(node.func, ast.Name) and node.func.id == "getattr":
        return _dynamic(source, f"target is computed by '{source}' at run time")
    callee = resolver.expr(node.func).target
    args = node.args
    if callee not in PARTIALS or not args or isinstance(args[0], ast.Starred):
        return _dynamic(
            source, f"target is the result of calling '{resolver.text.segment(node.func)}'"
        )
    through_context = (
        len(args) > 1 and not isinstance(args[1], ast.Starred) and _context_run(args[0], resolver)
    )
    if through_context:
        args = args[1:]  # ``partial(ctx.run, f, x)`` calls ``f(x)`` in the copied context
    inner = job_target(args[0], resolver, depth + 1)
    bound = sum(1 for a in inner.arguments if a.name.startswith("#"))
    arguments = [*inner.arguments, *call_arguments(args[1:], node.keywords, resolver, bound)]
    if inner.target is None:
        if through_context and inner.param:  # written as what it runs: ``partial(f, x)``
            source = f"partial({_written(args, node.keywords, resolver)})"
        return _dynamic(source, inner.reason, arguments, inner.param)
    kind = TargetKind.YIELDED if inner.kind is TargetKind.YIELDED else TargetKind.PARTIAL
    return JobTarget(inner.target, kind, source, "", arguments, returned=inner.returned)


def _written(args: list[ast.expr], keywords: list[ast.keyword], resolver: Resolver) -> str:
    """The source of a call's arguments, ``f, *a, k=v, **kw``."""
    segment = resolver.text.segment
    return ", ".join(
        [segment(a) for a in args]
        + [f"{k.arg}={segment(k.value)}" if k.arg else f"**{segment(k.value)}" for k in keywords]
    )


def unwrap_runner(
    target: ast.expr, following: list[ast.expr], resolver: Resolver
) -> tuple[ast.expr, list[ast.expr]]:
    """``submit(ctx.run, f, x)`` / ``run_in_executor(None, ctx.run, f, x)``: the callable
    handed over is ``ctx.run``, the job ``f``. Returns (the job's node, its positional
    arguments); unchanged for any other target."""
    if following and not isinstance(following[0], ast.Starred) and _context_run(target, resolver):
        return following[0], following[1:]
    made = coroutine_run(target, following, resolver)
    if made is not None:
        return made.func, list(made.args)
    return target, following


# ``asyncio.run(coro)`` "runs the passed coroutine" in a new event loop, on the thread that
# calls it: handed to a thread or an executor with a coroutine made in the caller
# (``submit(asyncio.run, self.refresh())``), it is that coroutine function's work that
# runs there.
_COROUTINE_RUNNERS = frozenset({"asyncio.run", "asyncio.runners.run"})


def coroutine_run(
    target: ast.expr, following: list[ast.expr], resolver: Resolver
) -> ast.Call | None:
    """The coroutine call handed to ``asyncio.run`` (its first argument, made in the
    caller: ``f(x)``), None for any other runner or argument (a call with keyword arguments
    included: the job's arguments are read by position)."""
    if not following or not isinstance(following[0], ast.Call):
        return None
    made = following[0]
    if made.keywords or any(isinstance(a, ast.Starred) for a in made.args):
        return None
    return made if resolver.expr(target).target in _COROUTINE_RUNNERS else None


def _context_run(node: ast.expr, resolver: Resolver) -> bool:
    """``ctx.run`` of a ``contextvars.Context``: ``copy_context().run``, or through a name
    bound to ``copy_context()`` / ``Context()``."""
    if not isinstance(node, ast.Attribute) or node.attr != "run":
        return False
    resolved = resolver.expr(node)
    return resolved.target in _CONTEXT_RUN or resolved.returned == _CONTEXT


def _module_global(name: str, resolver: Resolver) -> bool:
    """``name`` is bound in no function around the use, but at module level."""
    scope = _module_scope(name, resolver)
    return scope is not None and name in scope.names


def _branched(name: str, resolver: Resolver) -> bool:
    """``name`` is a module-level name some block binds again (``BRANCHED``)."""
    scope = _module_scope(name, resolver)
    return scope is not None and f"{name}{BRANCHED}" in scope.names


def _module_scope(name: str, resolver: Resolver) -> Scope | None:
    """The module's scope, unless a function around the use binds ``name`` itself."""
    scope: Scope | None = resolver.scope
    while scope is not None and scope.kind is not ScopeKind.MODULE:
        if scope.kind is ScopeKind.FUNCTION and name in scope.names:
            return None
        scope = scope.parent
    return scope


def _rebound(node: ast.Name, resolver: Resolver) -> bool:
    """A local of the function bound by more than one statement (``writer = None`` then
    ``writer = to_tsv`` in an ``if``): what reaches the spawn depends on the path taken, and
    ``Thread(target=None)`` runs nothing, so the spawn is read from every binding."""
    values = _assigned_values(node, resolver)
    return values is not None and len(values) > 1


def _local(node: ast.Name, resolver: Resolver, source: str, depth: int) -> JobTarget:
    """``func = partial(f, x); ...; submit(func)``: the job of the value assigned, when every
    binding of the name in this function is a plain assignment of the same job."""
    name = node.id
    unknown = f"target is the local variable '{name}'"
    values = _assigned_values(node, resolver) if depth < _MAX_DEPTH else None
    if values is None and _module_global(name, resolver):
        reason = f"target is the module global '{name}', which a function rebinds: only known"
        return _dynamic(source, f"{reason} at run time")
    if values is None:
        return _dynamic(source, f"{unknown}: only known at run time")
    if any(isinstance(value, _Entered) for value in values):
        return _entered(values, resolver, source, unknown)
    other = next((value for value in values if isinstance(value, str)), None)
    if not values or other is not None:
        return _dynamic(source, f"{unknown}, {other or 'never assigned'}: only known at run time")
    jobs = [
        job_target(value, resolver, depth + 1) for value in values if isinstance(value, ast.expr)
    ]
    unresolved = next((job for job in jobs if job.target is None), None)
    if unresolved is not None:
        if unresolved.param and all(job == unresolved for job in jobs):
            # ``func_call = partial(ctx.run, func, *args)`` (``asyncio.to_thread``'s own body):
            # the parameter handed on, written so that the function reads as a spawn wrapper
            return replace(unresolved, reason=f"{unknown}: {unresolved.reason}")
        return _dynamic(source, f"{unknown}: {unresolved.reason}")
    if len({(job.target, job.kind) for job in jobs}) > 1:
        return _dynamic(source, f"{unknown}, assigned different callables: only known at run time")
    first = jobs[0]
    same = all(job.arguments == first.arguments for job in jobs)
    return JobTarget(first.target, first.kind, source, "", first.arguments if same else [])


def _entered(
    values: list[ast.expr | str | _Entered], resolver: Resolver, source: str, unknown: str
) -> JobTarget:
    """``with manager(...) as name``: the job is what ``manager`` yields, when every binding
    of the name is such a ``with`` of the same function (a call of it: the classifier reads
    what its generator yields). Anything else is only known at run time."""
    if not all(isinstance(value, _Entered) for value in values):
        return _dynamic(
            source, f"{unknown}, {_ENTERED} and bound otherwise: only known at run time"
        )
    managers = set()
    for value in values:
        assert isinstance(value, _Entered)
        call = value.manager
        resolved = resolver.expr(call.func) if isinstance(call, ast.Call) else None
        if resolved is None or resolved.receiver not in FUNCTION_CALLS or not resolved.target:
            return _dynamic(source, f"{unknown}, {_ENTERED}: only known at run time")
        managers.add(resolved.target)
    if len(managers) > 1:
        return _dynamic(
            source, f"{unknown}, given by different context managers: only known at run time"
        )
    return JobTarget(managers.pop(), TargetKind.YIELDED, source)


def _assigned_values(node: ast.Name, resolver: Resolver) -> list[ast.expr | str | _Entered] | None:
    """What each binding of ``node.id`` in the function using it assigns (what it is, for a
    binding that is not ``name = value``: a loop variable, ``with ... as``, a parameter, a
    nested def, ``global``...). None when the name is not a local of that function."""
    scope = resolver.scope
    if node.id not in scope.names or not scope.prefix.endswith(".<locals>"):
        return None
    function = _enclosing_function(node, resolver)
    if function is None or not f".{scope.prefix}".endswith(f".{function.name}.<locals>"):
        return None
    return _bindings(function, node.id)


def _bindings(
    function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> list[ast.expr | str | _Entered]:
    arguments = function.args
    params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    params += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    found: list[ast.expr | str | _Entered] = ["also a parameter" for p in params if p.arg == name]
    stack: list[ast.AST] = list(function.body)
    while stack:
        current = stack.pop()
        value = _plain_assignment(current, name)
        if value is not None:
            found.append(value)
            stack.append(value)
            continue
        if isinstance(current, ast.withitem) and _named(current.optional_vars, name):
            found.append(_Entered(current.context_expr))
            stack.append(current.context_expr)
            continue
        if _binds_otherwise(current, name):
            found.append("bound in a way the scan cannot follow")
        if isinstance(current, _SCOPES):
            continue  # a nested scope: its names are its own
        stack.extend(ast.iter_child_nodes(current))
    return found


def yielded_callable(
    function: ast.FunctionDef | ast.AsyncFunctionDef, decorators: list[str], resolver: Resolver
) -> str | None:
    """What ``with function(...) as name`` binds name to, for a ``@contextmanager`` (or
    ``@asynccontextmanager``) generator whose every ``yield`` yields the same name of a
    function: a def of its own (bound once, undecorated), else a module-level or imported
    name (the classifier checks it is a project function). ``resolver``: the function's."""
    if not _MANAGERS.intersection(decorators):
        return None
    yields = [n for n in own_nodes(function) if isinstance(n, ast.Yield | ast.YieldFrom)]
    names = {
        y.value.id if isinstance(y, ast.Yield) and isinstance(y.value, ast.Name) else None
        for y in yields
    }
    if len(names) != 1:
        return None  # no yield, or several different ones
    name = names.pop()
    if name is None:
        return None  # ``yield``, ``yield from`` or ``yield <not a name>``
    bindings = _bindings(function, name)
    if not bindings:
        resolved = resolver.expr(ast.Name(id=name, ctx=ast.Load()))
        if resolved.receiver is not ReceiverKind.NONE or not resolved.target:
            return None
        return public_name(resolved.target, resolver.module)
    defs = [
        n
        for n in own_nodes(function)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
    ]
    binding = resolver.scope.names.get(name)
    if len(bindings) != 1 or len(defs) != 1 or defs[0].decorator_list or binding is None:
        return None
    return binding.target if binding.kind is BindingKind.FUNCTION else None


def _named(node: ast.expr | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _plain_assignment(node: ast.AST, name: str) -> ast.expr | None:
    """The value of ``name = value`` / ``name: T = value`` / ``(name := value)``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return node.value
    elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
        target = node.target
        if isinstance(target, ast.Name) and target.id == name:
            return node.value
    return None


def _binds_otherwise(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Global | ast.Nonlocal):
        return name in node.names
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return node.name == name
    if isinstance(node, ast.MatchMapping):
        return node.rest == name
    if isinstance(node, ast.alias):
        return (node.asname or node.name.partition(".")[0]) == name
    return False


_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Position = tuple[int, int]


class _Functions(threading.local):
    """The function definitions of the file being walked, parsed again from its text (the
    walk does not keep the tree), for the few sites whose target is a local variable."""

    text: SourceText | None = None
    spans: list[tuple[_Position, _Position, _Function]] = []


_FUNCTIONS = _Functions()


def _enclosing_function(node: ast.expr, resolver: Resolver) -> _Function | None:
    if _FUNCTIONS.text is not resolver.text:
        _FUNCTIONS.spans = _function_spans(resolver.text)
        _FUNCTIONS.text = resolver.text
    where = (node.lineno, node.col_offset)
    inside = [s for s in _FUNCTIONS.spans if s[0] <= where < s[1]]
    return max(inside, key=lambda s: s[0])[2] if inside else None


def _function_spans(text: SourceText) -> list[tuple[_Position, _Position, _Function]]:
    try:
        tree = ast.parse("\n".join(text.lines))
    except (SyntaxError, ValueError):
        return []
    return [
        ((f.lineno, f.col_offset), (f.end_lineno or f.lineno, f.end_col_offset or 0), f)
        for f in ast.walk(tree)
        if isinstance(f, _Function)
    ]


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
