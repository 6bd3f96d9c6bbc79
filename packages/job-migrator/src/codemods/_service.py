"""A bound method of a module-level service object becomes a job that calls it on that object.

``threading.Thread(target=order_service.rebuild, args=(order_id,))`` ->
``order_service_rebuild.enqueue(order_id)``, with a thin job written into the
module that builds the object::

    @job(pool="batch", idempotent=True)
    def order_service_rebuild(order_id):
        return order_service.rebuild(order_id)

Only when the worker provably has the same object: the site names it as
``name.method`` (or ``module.name.method``); ``name`` is bound exactly once,
at module level of a project module, to ``Cls(...)`` where ``Cls`` is the
class defining the job; that module neither sets an attribute of it nor calls
a method on it at import time (so importing the module builds it the same way
in the worker); the method takes plain parameters. Any other bound method
stays where it is, with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from codemods._declared import Kind, annotation, declared
from codemods._jobdefs import registered_def
from codemods._project import ModuleInfo, Project, enclosing_function
from codemods._resolve import Where, derives, resolve, resolve_expr
from codemods._types import ArgumentCrossing, Crossing, Wrapper
from inventory.models import CallSite, Job

_Def = ast.FunctionDef | ast.AsyncFunctionDef
NOT_AN_OBJECT = (
    "bound method: the instance cannot be serialised, and `{written}` is not a module-level "
    "object of the project that a worker builds the same way on import: call it on one "
    "(`mailer = Mailer()` at module level), or make it a module-level function (or a "
    "@staticmethod) taking the data it reads of the instance, and apply again"
)


NOT_STORED = (
    "bound method: the instance cannot be serialised as it is declared: `{written}` is called "
    "on `{head}`, which is neither a module-level object "
    "a worker builds the same way on import nor an instance a runtime codec stores ({why}); "
    "the method moves as it is when `{head}` is a model instance (stored by reference) or a "
    "dataclass, pydantic or attrs object (tagged JSON); else make it a module-level function "
    "(or a @staticmethod) taking the data it reads of the instance, and apply again"
)
CONSTRUCTOR = (
    "constructor: `{cls}(...)` builds an instance of {cls} the caller goes on to use, and a "
    "worker cannot hand an object back (an enqueue returns a job handle): what is slow in "
    "building it stays with the caller; move that work into a module-level function whose "
    "result the caller does not need, and apply again"
)
UNNAMED = (
    "bound method: `{written}` is a local name for the method `{job}` of an instance this "
    "site does not name, and apply moves a bound method only where it is handed over as "
    "itself (`Thread(target=obj.{job}, args=...)`); hand it over so (it then moves when "
    "`obj` is a model instance, or a dataclass, pydantic or attrs object), or make it a "
    "module-level function (or a @staticmethod) taking the data it reads of the instance, "
    "and apply again"
)
WRAPPED = (
    "bound method: `{written}` {how}, and apply moves a bound method only "
    "where it is handed over as itself (`Thread(target={method}, args=...)`); hand it over "
    "so (it then moves when the instance is a model instance, or a dataclass, pydantic or "
    "attrs object), or make it a module-level function (or a @staticmethod) taking the "
    "data it reads of the instance, and apply again"
)
# Kind.ENCODED types that are values, not objects with methods of the project.
_VALUES = ("datetime.", "decimal.", "uuid.")


def no_object(reason: str) -> bool:
    """The reason :func:`plan` gives when the site names no module-level object."""
    return reason.startswith(NOT_AN_OBJECT.partition("{")[0])


@dataclass(frozen=True)
class _Object:
    info: ModuleInfo  # the module binding it
    name: str


def plan(site: CallSite, job: Job, project: Project) -> tuple[Wrapper, list[str]] | str:
    """The wrapper job and its parameters, or why the bound method cannot move."""
    written = site.target_source.strip()
    cls, _, method = job.qualname.rpartition(".")
    found = _module_object(site, written, project)
    problem = None if found is not None else NOT_AN_OBJECT.format(written=written or "the instance")
    problem = problem or (_built_as(found, cls, project) if found else None)
    if found is not None and not problem and found.info.path not in project.sources:
        problem = f"bound method: `{found.name}` is built in {found.info.path}, which apply does not edit (not scanned, or refused)"
    fn = _method(cls, method, project)
    home = project.lookup(cls)
    if not problem and (fn is None or not _plain(fn)):
        problem = (
            f"bound method {written}: the wrapper needs a method with plain parameters "
            "(defaults only literals; no *, ** or keyword-only)"
        )
    if problem or found is None or fn is None:
        return problem or NOT_AN_OBJECT.format(written=written)
    params = [a.arg for a in fn.args.args[1:]]
    same = home is not None and home[0].path == found.info.path
    return _wrapper(found, method, fn, same), params


def _module_object(site: CallSite, written: str, project: Project) -> _Object | None:
    """The module-level object ``written`` (``obj.method``) names, seen from the site's module."""
    head, _, _ = _callee(written).rpartition(".")
    caller = project.module_at(site.location.path)
    if caller is None or not head or not all(p.isidentifier() for p in head.split(".")):
        return None
    first, _, rest = head.partition(".")
    dotted = resolve(first, Where(project, caller)) + (f".{rest}" if rest else "")
    found = project.lookup(dotted)
    if found is None or found[1] not in found[0].assignments:
        return None
    return _Object(found[0], found[1])


def _callee(written: str, through_lambda: bool = False) -> str:
    """``obj.method`` of what the site hands over: ``obj.method`` or the call ``obj.method(a.b)``.

    A task's coroutine is written as a call whose arguments may hold dots
    (``Users.touch(user.id)``): the object is read from the called name, not the text.
    With ``through_lambda``, a lambda names the call it makes (``lambda: self.get(block=True,
    timeout=1.0)``: ``self.get``), and anything else names nothing (""); without it, the
    text as written.
    """
    try:
        expr = ast.parse(written, mode="eval").body
    except SyntaxError:
        return "" if through_lambda else written
    if through_lambda and isinstance(expr, ast.Lambda):
        expr = expr.body
    elif through_lambda and _is_partial(expr):
        assert isinstance(expr, ast.Call)
        expr = expr.args[0]
    name = dotted_name(expr.func if isinstance(expr, ast.Call) else expr)
    return name or ("" if through_lambda else written)


def _is_partial(expr: ast.expr) -> bool:
    """``partial(obj.method, ...)`` / ``functools.partial(...)`` with the callable first."""
    if not isinstance(expr, ast.Call) or not expr.args:
        return False
    name = dotted_name(expr.func) or ""
    return name == "partial" or name.endswith(".partial")


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _built_as(found: _Object, cls: str, project: Project) -> str | None:
    """None when the object is ``cls(...)``, bound once and left alone at import time."""
    said = f"`{found.name}` in {found.info.name}"
    value = found.info.assignments[found.name]
    built = (
        resolve_expr(value.func, Where(project, found.info))
        if isinstance(value, ast.Call)
        else None
    )
    if built is None or project.lookup(built) != project.lookup(cls):
        return f"bound method: {said} is not built by calling {cls.rpartition('.')[2]}(...)"
    bindings = [s for s in found.info.tree.body if _binds(s, found.name)]
    if len(bindings) != 1:
        return f"bound method: {said} is bound more than once at module level"
    touched = _touched_at_import(found)
    return f"bound method: {said} is changed at import time (line {touched})" if touched else None


def _binds(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _touched_at_import(found: _Object) -> int | None:
    """The first module-level line that sets an attribute of, or calls a method on, the object."""
    for stmt in found.info.tree.body:
        if isinstance(stmt, _Def | ast.ClassDef):
            continue  # runs later, if ever: not part of building the object
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == found.name
            ):
                return node.lineno
    return None


def _method(cls: str, method: str, project: Project) -> _Def | None:
    found = project.lookup(cls)
    if found is None or found[1] not in found[0].classes:
        return None
    body = found[0].classes[found[1]].body
    return next((s for s in body if isinstance(s, _Def) and s.name == method), None)


_NOT_BOUND = frozenset(
    {"staticmethod", "classmethod", "property", "cached_property", "setter", "getter", "deleter"}
)


def _decorator_name(node: ast.expr) -> str:
    """``throttle`` of ``@throttle(5)``, ``cached_property`` of ``@functools.cached_property``."""
    node = node.func if isinstance(node, ast.Call) else node
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _plain(fn: _Def) -> bool:
    args = fn.args
    # A decorator that keeps the call a bound method call (``@throttle(...)``) is called by
    # the wrapper too, through the object; one that makes it something else is not.
    has_self = bool(args.args) and not any(
        _decorator_name(d) in _NOT_BOUND for d in fn.decorator_list
    )
    literal = all(isinstance(d, ast.Constant) for d in args.defaults)
    return (
        has_self
        and literal
        and not (args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs)
    )


def _wrapper(found: _Object, method: str, fn: _Def, same_module: bool = True) -> Wrapper:
    name = f"{found.name.lstrip('_')}_{method.lstrip('_')}"
    params = ", ".join(_param(a, fn, same_module) for a in fn.args.args[1:])
    calls = ", ".join(a.arg for a in fn.args.args[1:])
    prefix = "async " if isinstance(fn, ast.AsyncFunctionDef) else ""
    awaited = "await " if prefix else ""
    source = (
        f"{prefix}def {name}({params}):\n"
        f'    """`{found.name}.{method}` on the worker\'s own `{found.name}` (written by migrator)."""\n'
        f"    return {awaited}{found.name}.{method}({calls})\n"
    )
    # After the module's last statement: the object and whatever it needs are bound by then.
    return Wrapper(found.info.name, found.info.path, name, "", source)


def _param(arg: ast.arg, fn: _Def, annotated: bool) -> str:
    """The wrapper's parameter: as the method declares it, with its literal default.

    Annotations are copied only when the object is built in the class's own module
    (elsewhere the names they use may not be bound where the wrapper is written).
    """
    text = ast.unparse(arg) if annotated else arg.arg
    positional = fn.args.args
    first_default = len(positional) - len(fn.args.defaults)
    index = positional.index(arg)
    if index >= first_default:
        sign = " = " if annotated and arg.annotation is not None else "="
        text += sign + ast.unparse(fn.args.defaults[index - first_default])
    return text


def on_instance(site: CallSite, job: Job, project: Project) -> ArgumentCrossing | str:
    """How the instance of a bound-method site crosses, when a runtime codec stores it; else why not.

    ``report.render("pdf")`` on ``report = Report(...)`` of a dataclass, or ``order.notify()``
    on an ``Order`` loaded from the ORM: the method itself is the job (``@job`` on it; the
    runtime binds it like a plain method) and ``report.render.enqueue("pdf")`` stores the
    instance as the call's first argument, by its codec. Read from declarations
    (``codemods._declared``), never guessed: an instance of unknown type stays put.
    """
    written = site.target_source.strip()
    head = _callee(written).rpartition(".")[0]
    job_class, _, method = job.qualname.rpartition(".")
    info = project.module_at(site.location.path)
    inside = _callee(written, through_lambda=True)
    if inside and inside != _callee(written):
        lam = written.startswith("lambda")
        how = f"calls `{inside}` inside a lambda" if lam else f"binds `{inside}` in a partial"
        return WRAPPED.format(written=written, method=inside, how=how)
    if method == "__init__":
        return CONSTRUCTOR.format(cls=job_class.rpartition(".")[2])
    if not head and written.isidentifier():
        return UNNAMED.format(written=written, job=method)
    if not head:
        return NOT_STORED.format(written=written, head="?", why="the instance is not named")
    if info is None:
        why = f"{site.location.path} is not a module of the scanned tree"
        return NOT_STORED.format(written=written, head=head, why=why)
    try:
        node = ast.parse(f"({head})", mode="eval").body
    except SyntaxError:
        return NOT_STORED.format(written=written, head=head, why="it does not parse")
    function = enclosing_function(info.tree, site.location.line)
    cls = _own_class(info, function, head)
    if cls is not None:  # ``self.notify()`` in a method: an instance of the enclosing class
        found = annotation(ast.Name(id=cls.name), Where(project, info))
        if found.kind not in (Kind.MODEL, Kind.ENCODED):
            found = replace(found, why=f"`{head}` is a {cls.name}, {_NOT_A_RECORD}")
    else:
        found = declared(node, Where(project, info, function, line=site.location.line))
    override = overridden(job_class, method, project) if found.kind in _STORED else None
    if override is not None:
        return (
            f"bound method: `{written}` is overridden in {override}: an instance of it would "
            "call its own method, which is no job (its `.enqueue` does not exist), and a "
            "worker would run this one; give the override the same `@job`, or call a "
            "module-level function, and apply again"
        )
    if found.kind is Kind.MODEL and method in SAVES:
        return SAVED.format(written=written, head=head, type=found.type, method=method)
    if found.kind is Kind.MODEL:
        built = ", built here: an unsaved one falls back to a direct call" if found.built else ""
        detail = f"model instance ({found.type}), by reference{built}"
        return ArgumentCrossing(name="self", source=head, how=Crossing.CODEC, detail=detail)
    if found.kind is Kind.ENCODED and found.type and not found.type.startswith(_VALUES):
        detail = f"tagged ({found.type})"
        return ArgumentCrossing(name="self", source=head, how=Crossing.CODEC, detail=detail)
    why = found.why or (f"a {found.type}" if found.type else f"its kind is {found.kind.value}")
    return NOT_STORED.format(written=written, head=head, why=why)


_NOT_A_RECORD = "which is not a model, dataclass, pydantic or attrs class"
# A model's own save: what it writes is the instance in memory, which a reference drops.
SAVES = frozenset({"save", "asave", "save_base"})
SAVED = (
    "bound method: `{written}` saves `{head}` (an instance of {type}) as the caller holds it: a model "
    "instance crosses by reference, so a worker would load the row as stored and save that, "
    "dropping the changes the caller made in memory; move the slow part of `{method}` into a "
    "module-level function called after the save, then scan and apply again"
)
_STORED = (Kind.MODEL, Kind.ENCODED)


def overridden(cls: str, method: str, project: Project) -> str | None:
    """A project class below ``cls`` defining ``method`` again (the first found) without
    registering it as a job of its own (``@job``: then its ``.enqueue`` exists), else None."""
    home = project.lookup(cls)
    if home is None:
        return None
    for path in sorted(project.texts_containing(f"def {method}(")):
        info = project.module_at(path)
        if info is None:
            continue
        for name, node in info.classes.items():
            qualname = f"{info.name}.{name}"
            if project.lookup(qualname) == home or not _defines(node, method):
                continue
            if derives(qualname, f"{home[0].name}.{home[1]}", Where(project, info)):
                return qualname
    return None


def _defines(node: ast.ClassDef, method: str) -> bool:
    return any(
        isinstance(s, _Def) and s.name == method and not registered_def(s) for s in node.body
    )


def _own_class(
    info: ModuleInfo, function: ast.FunctionDef | ast.AsyncFunctionDef | None, head: str
) -> ast.ClassDef | None:
    """The class a method is defined in, when ``head`` is its first parameter (``self``)."""
    if function is None:
        return None
    params = [*function.args.posonlyargs, *function.args.args]
    if not params or params[0].arg != head:
        return None
    for node in ast.walk(info.tree):
        if isinstance(node, ast.ClassDef) and function in node.body:
            return node
    return None
