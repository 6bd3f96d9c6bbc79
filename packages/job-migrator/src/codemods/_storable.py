"""Argument safety: a site moves only when every argument is provably storable.

Provably storable means one of: plain JSON (a literal, a container of them, a
value whose declared type is a JSON scalar or container); a type the runtime
encodes (``datetime``, ``Decimal``, ``UUID``, ``Path``, an enum, a pydantic
model) passed to a job parameter that declares that very type; a lazy
translation string, forced in the caller's active language with ``str(...)``
at the call site; or a model instance whose re-fetch by primary key is
provably the same object (the by-id form, see :func:`_by_id`). The scan's own
verdict counts too (``serialisable=True``, ``False`` with its reason). Anything
else is unknown, and unknown means skip, with the missing fact in the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods._declared import Declared, Kind, annotation, declared, returned
from codemods._orm import ModelKey, Orm, model_key
from codemods._project import ModuleInfo, Project, enclosing_function, module_name
from codemods._resolve import Where, assignments, parent_map, resolve_expr
from codemods._types import ArgEdit, Wrapper
from inventory.models import Argument, CallSite, Job

_Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Storable:
    edits: tuple[ArgEdit, ...] = ()
    wrapper: Wrapper | None = None


@dataclass(frozen=True)
class _Model:
    argument: Argument
    model: str
    param: str
    built: bool = False  # made by its constructor in the caller


def check(site: CallSite, job: Job, params: list[str], project: Project) -> Storable | str:
    """What the site's arguments need on their way into the queue, or why it cannot move."""
    where = _caller(site, project)
    edits: list[ArgEdit] = []
    models: list[_Model] = []
    for index, arg in enumerate(site.arguments):
        param = _param_name(arg, index, params)
        found = _declared(arg, where)
        if found.kind is Kind.LAZY_TEXT:
            edits.append(ArgEdit(arg.source, f"str({arg.source.strip()})"))
        elif found.kind is Kind.MODEL and param is not None:
            models.append(_Model(arg, found.type, param, found.built))
        else:
            reason = _reason(arg, found, param, job, project)
            if reason:
                return reason
    if not models:
        return Storable(tuple(edits))
    return _by_id(site, job, models, where, edits)


def _caller(site: CallSite, project: Project) -> Where | None:
    info = project.module_at(site.location.path)
    if info is None:
        return None
    return Where(
        project, info, enclosing_function(info.tree, site.location.line), line=site.location.line
    )


def _param_name(arg: Argument, index: int, params: list[str]) -> str | None:
    if arg.name.startswith("#"):
        position = int(arg.name[1:])
        return params[position] if position < len(params) else None
    return None if arg.name.startswith("*") else arg.name


def _declared(arg: Argument, where: Where | None) -> Declared:
    if where is None or arg.name.startswith("*"):
        return Declared(Kind.UNKNOWN, why="unpacked with * or **")
    try:
        node = ast.parse(f"({arg.source.strip()})", mode="eval").body
    except SyntaxError:
        return Declared(Kind.UNKNOWN, why="the argument does not parse")
    return declared(node, where)


def _reason(arg: Argument, found: Declared, param: str | None, job: Job, project: Project) -> str:
    """Empty when the argument is storable, else why not (naming the missing fact)."""
    said = f"argument {arg.name} ({arg.source.strip()})"
    if arg.serialisable is False:
        why = f"{said} cannot be serialised" + (f": {arg.reason}" if arg.reason else "")
        return why + _reads_hint(job, param, project)
    if found.kind is Kind.JSON:
        return ""
    if found.kind is Kind.NOT_DATA:
        return f"{said} cannot be serialised: {found.why}" + _reads_hint(job, param, project)
    if found.kind is Kind.ENCODED:
        return _encoded(said, found.type, param, job, project)
    if found.kind is Kind.MODEL:
        return f"{said} is a {found.type} instance: pass its primary key"
    if arg.serialisable:
        return ""  # the scan found it storable (a literal, a scalar by type or name)
    why = f"{said} is not provably storable: {found.why or 'its type is unknown'}"
    return why + _reads_hint(job, param, project)


_HINT_LIMIT = 5


def _read_chain(name: ast.Name, parents: dict[ast.AST, ast.AST]) -> ast.expr | None:
    """``request.user.email`` / ``request.META["HTTP_HOST"]`` around ``name``, when it is read;
    None when the name is used whole or the chain is written to."""
    top: ast.expr = name
    while True:
        up = parents.get(top)
        if isinstance(up, ast.Attribute) and up.value is top:
            top = up
            continue
        if isinstance(up, ast.Subscript) and up.value is top and isinstance(up.slice, ast.Constant):
            top = up
            continue
        break
    if top is name or not isinstance(top, ast.Attribute | ast.Subscript):
        return None
    return top if isinstance(top.ctx, ast.Load) else None


def _reads_hint(job: Job, param: str | None, project: Project) -> str:
    """What the job reads of the parameter, when that is all it does with it: the values to
    pass instead (``request`` -> ``request.get_host()``, ``request.user.email``).

    Read from the job's body: every use of the parameter is the head of an attribute
    chain (a call of its last attribute included) that is not written to. A parameter
    passed on whole (``render(request, ...)``) gives no hint.
    """
    fn = _job_def(job, project) if param else None
    if fn is None:
        return ""
    nodes = list(ast.walk(fn[1]))
    parents = parent_map(nodes)
    reads: dict[str, None] = {}
    for node in nodes:
        if not (isinstance(node, ast.Name) and node.id == param):
            continue
        top = _read_chain(node, parents)
        if top is None:
            return ""  # used whole, or written: no simple list of values
        parent = parents.get(top)
        called = isinstance(parent, ast.Call) and parent.func is top
        if isinstance(parent, ast.Call) and called and (parent.args or parent.keywords):
            return ""  # request.build_absolute_uri(path): a value per call, not one to pass
        reads[ast.unparse(top) + ("()" if called else "")] = None
    if not reads or len(reads) > _HINT_LIMIT:
        return ""
    listed = ", ".join(f"`{r}`" for r in reads)
    return f"; the job reads only {listed} of it: pass those values instead"


def _encoded(said: str, rtype: str, param: str | None, job: Job, project: Project) -> str:
    """A type the runtime encodes only through the job's annotation of that very type."""
    fn = _job_def(job, project)
    arg = _param_def(fn[1], param) if fn is not None and param is not None else None
    if fn is not None and arg is not None and arg.annotation is not None:
        declared_type = annotation(arg.annotation, Where(project, fn[0]))
        if declared_type.kind is Kind.ENCODED and declared_type.type == rtype:
            return ""
    return f"{said} is a {rtype}: the job's parameter {param or '?'} must declare `{rtype}` for the runtime to store it"


def result_reason(job: Job, project: Project, payload_json: bool = True) -> str | None:
    """Why the job's return value cannot be stored as its result (None: it can).

    A handler rewritten to answer 202 serves the job's result from the status
    endpoint, so the result must be plain JSON: a return annotation that says
    so, else every ``return`` of the body giving JSON (no value at all is None).
    An ``HttpResponse`` (a CSV download, a rendered page) is not data.
    """
    fn = _job_def(job, project)
    if fn is None:
        return "the job's definition as a module-level function"
    info, node = fn
    where = Where(project, info, node, payload_of=node if payload_json else None)
    if node.returns is not None:
        found = annotation(node.returns, Where(project, info))
    elif not any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(node)):
        return None  # returns None: stored as null
    else:
        found = returned(node, where) or Declared(Kind.UNKNOWN, why="no declared return type")
    if found.kind is Kind.JSON:
        return None
    what = found.type or found.why or "a value of unknown type"
    return f"a result the status endpoint can serve as JSON (it returns {what})"


def _job_def(job: Job, project: Project) -> tuple[ModuleInfo, _Def] | None:
    if job.location is None:
        return None
    info = project.module_at(job.location.path)
    name = job.qualname.rsplit(".", 1)[-1]
    if info is None or name not in info.functions:
        return None
    return info, info.functions[name]


def _param_def(fn: _Def, name: str) -> ast.arg | None:
    return next((a for a in [*fn.args.args, *fn.args.kwonlyargs] if a.arg == name), None)


def _by_id(
    site: CallSite, job: Job, models: list[_Model], where: Where | None, edits: list[ArgEdit]
) -> Storable | str:
    """Enqueue the primary key, re-fetch in a thin job: only when the re-fetch is provably the same.

    Provably the same: a project Django model with an integer primary key, or
    a Flask-SQLAlchemy ``db.Model`` subclass with an integer or string one;
    the argument is a local name loaded from the database, or built by its
    constructor and then committed (``<db>.session.commit()`` between the
    binding and the site, in the site's own block), so it has a committed
    row; the caller never writes an attribute of it, and calls no method on
    it, before the site (so the row holds everything the instance does); the
    job is a module-level function taking the instance as one parameter.
    """
    if len(models) != 1 or where is None or where.function is None:
        return "more than one model instance as argument: rewrite by hand"
    found = models[0]
    name = found.argument.source.strip()
    key = model_key(found.model, where)
    problem = _changed_before(where.function, name, site.location.line)
    if found.built and not problem and not (key and _committed(where, name, site, key)):
        problem = (
            f"`{name}` loaded from the database, or committed before the call"
            " (it is built here, its row may not exist yet)"
        )
    problem = problem or (
        None if key is not None else "its primary key is not an integer or a string"
    )
    fn = _job_def(job, where.project)
    if fn is not None and not problem and not _plain(fn[1]):
        problem = "a job signature without defaults, * or keyword-only parameters"
    if problem or fn is None or key is None:
        said = f"argument {found.argument.name} ({name}) is a {found.model} instance"
        return f"{said}: the by-id form needs {problem or 'the job as a module-level function'}"
    wrapper = _wrapper(job, fn[1], found, key, where.project)
    return Storable((*edits, ArgEdit(found.argument.source, f"{name}.{key.attr}")), wrapper)


def _plain(fn: _Def) -> bool:
    args = fn.args
    return not (args.defaults or args.kwonlyargs or args.vararg or args.kwarg or args.posonlyargs)


def _changed_before(fn: _Def, name: str, line: int) -> str | None:
    if not name.isidentifier():
        return "the instance as a plain local name"
    if len(assignments(fn, name)) > 1:
        return f"`{name}` bound once in the caller"
    for node in ast.walk(fn):
        if not isinstance(node, ast.stmt | ast.expr) or node.lineno >= line:
            continue
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AugAssign | ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Attribute) and _is(t.value, name) for t in targets):
            return f"no change to `{name}` before the call (line {node.lineno} sets an attribute)"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _is(node.func.value, name)
        ):
            return f"no method call on `{name}` before the call (line {node.lineno})"
    return None


def _committed(where: Where, name: str, site: CallSite, key: ModelKey) -> bool:
    """``<db>.session.commit()`` after ``name`` is bound and before the site, in the site's block."""
    fn = where.function
    if key.orm is not Orm.SQLALCHEMY or fn is None:
        return False
    bound = [n.lineno for n in assignments(fn, name) if isinstance(n, ast.stmt)]
    block = _block_of(fn, site.location.line)
    if len(bound) != 1 or block is None:
        return False
    return any(
        bound[0] < stmt.lineno < site.location.line
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and resolve_expr(stmt.value.func, where) == f"{key.db}.session.commit"
        for stmt in block
    )


def _block_of(fn: _Def, line: int) -> list[ast.stmt] | None:
    """The statement list that holds the statement starting at ``line``."""
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(
                isinstance(s, ast.stmt) and s.lineno == line for s in block
            ):
                return block
    return None


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _wrapper(job: Job, fn: _Def, found: _Model, key: ModelKey, project: Project) -> Wrapper:
    assert job.location is not None
    info = project.module_at(job.location.path)
    assert info is not None
    model = key.model.rpartition(".")[2]
    key_param = f"{found.param}_id"
    params = ", ".join(
        f"{key_param}: {key.type}" if a.arg == found.param else info.segment(a)
        for a in fn.args.args
    )
    lines, fetched = _refetch(key, found.param, key_param)
    calls = ", ".join(f"{a.arg}={fetched if a.arg == found.param else a.arg}" for a in fn.args.args)
    name = f"{fn.name}_by_id"
    source = (
        f"def {name}({params}):\n"
        f'    """`{fn.name}` on the {model} re-fetched by its primary key (written by `migrator apply`)."""\n'
        f"{lines}"
        f"    return {fn.name}({calls})\n"
    )
    return Wrapper(module_name(job.location.path), job.location.path, name, fn.name, source)


def _refetch(key: ModelKey, local: str, key_param: str) -> tuple[str, str]:
    """The wrapper's lines before its call, and the re-fetched row's expression in the call.

    The model is imported inside the wrapper: the job's module may be one the
    models module imports.
    """
    module, _, model = key.model.rpartition(".")
    if key.orm is Orm.DJANGO:
        return (
            f"    from {module} import {model}\n\n",
            f"{model}._default_manager.get(pk={key_param})",
        )
    db_module, _, db = key.db.rpartition(".")
    imports = (
        f"    from {module} import {', '.join(sorted({model, db}))}\n"
        if db_module == module
        else f"    from {db_module} import {db}\n    from {module} import {model}\n"
    )
    lines = (
        f"{imports}\n"
        f"    {local} = {db}.session.get({model}, {key_param})\n"
        f"    if {local} is None:  # deleted since the enqueue: fail as Django's get() would\n"
        f'        raise LookupError(f"{model} {{{key_param}}} no longer exists")\n'
    )
    return lines, local
