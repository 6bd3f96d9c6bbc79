"""How each argument of a site crosses into the queue, and the one case that keeps a site.

The codemods no longer prove that every argument is storable: the runtime
encodes what it can at enqueue (plain JSON; by a codec: a model instance as a
typed reference, a model class by label, a lazy string forced in the caller's
language, dates, ``Decimal``, ``UUID``, enums, dataclasses, pydantic and attrs
objects as tagged JSON) and a call whose arguments it cannot encode runs the
way the site ran it before (``InlineShape``: call, thread, executor, task),
with the original objects, and is counted. So every argument is one of:

* ``JSON``: proven from the code (a literal, a declared JSON type, the scan's
  own verdict); a lazy translation string is still forced with ``str(...)`` at
  the call site, in the caller's active language, so it is JSON as written;
* ``codec: <kind> (<type>)``: a type a runtime codec carries;
* ``checked at run time``: not proven either way; encoded at enqueue, or the
  call falls back to running in-process (the shadow evidence counts it).

An argument that is *provably* never storable (an open file, a request, a
lock, a lambda, a function: ``Kind.NOT_DATA``, or the scan's own "not data"
verdict) makes every call fall back. The site still moves when that fallback
is the site's own behaviour (a direct call, a thread, an executor, a task, a
receiver, an ``on_commit`` callback, a ``BackgroundTasks`` task, which is
handed ``fn.enqueue`` and so falls back after the response as before), with a
note on the argument saying what to pass instead; it stays put when the
fallback is not how it ran before: a child process (the fallback runs it in a
thread of the web process).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods._declared import Declared, Kind, annotation, declared, returned
from codemods._project import ModuleInfo, Project, enclosing_function
from codemods._resolve import Where, parent_map
from codemods._types import ArgEdit, ArgumentCrossing, Crossing
from inventory.models import Argument, CallSite, Job, Pattern

_Def = ast.FunctionDef | ast.AsyncFunctionDef

# Patterns whose runtime fallback (the call run as the site ran it) is not what the site did.
_OTHER_FALLBACK = {
    Pattern.PROCESS: "a child process: the fallback runs the job in a thread of this process",
}
# The scan's "cannot be serialised" verdicts a runtime codec may still carry (a model, a class
# that may be a model, the enclosing object that may be a model instance): checked at run time.
_CODEC_MAYBE = ("ORM instance", "instance of the model", "a class", "enclosing object")
_ENCODED_KINDS = {
    "datetime.datetime": "datetime",
    "datetime.date": "date",
    "datetime.time": "time",
    "datetime.timedelta": "timedelta",
    "decimal.Decimal": "Decimal",
    "uuid.UUID": "UUID",
}
_NEVER_NOTE = "never storable as written ({why}): every call falls back to running in-process{hint}"


@dataclass(frozen=True)
class Storable:
    edits: tuple[ArgEdit, ...] = ()
    crossings: tuple[ArgumentCrossing, ...] = ()


def check(site: CallSite, job: Job, params: list[str], project: Project) -> Storable | str:
    """How the site's arguments cross into the queue, or why the site cannot move."""
    where = _caller(site, project)
    edits: list[ArgEdit] = []
    crossings: list[ArgumentCrossing] = []
    for index, arg in enumerate(site.arguments):
        param = _param_name(arg, index, params)
        found = _declared(arg, where)
        if found.kind is Kind.LAZY_TEXT:
            edits.append(ArgEdit(arg.source, f"str({arg.source.strip()})"))
        never = _never(arg, found)
        if never is not None and site.pattern in _OTHER_FALLBACK:
            return _refusal(site, arg, never, job, param, project)
        hint = _reads_hint(job, param, project) if never is not None else ""
        crossings.append(_crossing(arg, found, never, hint))
    return Storable(tuple(edits), tuple(crossings))


def _never(arg: Argument, found: Declared) -> str | None:
    """What the argument is when no codec can ever store it (None: it may cross)."""
    if found.kind is Kind.NOT_DATA:
        return found.why
    if found.kind is not Kind.UNKNOWN or arg.serialisable is not False:
        return None
    if any(maybe in arg.reason for maybe in _CODEC_MAYBE):
        return None
    return arg.reason or "the scan found it is not data"


def _crossing(arg: Argument, found: Declared, never: str | None, hint: str) -> ArgumentCrossing:
    name, source = arg.name, arg.source

    def crossing(how: Crossing, detail: str = "", falls_back: bool = False) -> ArgumentCrossing:
        return ArgumentCrossing(
            name=name, source=source, how=how, detail=detail, falls_back=falls_back
        )

    if never is not None:
        return crossing(Crossing.RUNTIME, _NEVER_NOTE.format(why=never, hint=hint), True)
    if found.kind is Kind.LAZY_TEXT:
        return crossing(Crossing.JSON, "a lazy string, forced with str() in the caller's language")
    if found.kind is Kind.JSON:
        return crossing(Crossing.JSON)
    if found.kind is Kind.UNKNOWN and arg.serialisable:
        return crossing(Crossing.RUNTIME, "the scan expects plain data from its form or name")
    if found.kind is Kind.MODEL:
        built = (
            ", built here: an unsaved one falls back to running in-process" if found.built else ""
        )
        return crossing(Crossing.CODEC, f"model instance ({found.type}), by reference{built}")
    if found.kind is Kind.MODEL_CLASS:
        return crossing(Crossing.CODEC, f"model class ({found.type}), by label")
    if found.kind is Kind.ENCODED:
        return crossing(
            Crossing.CODEC, f"{_ENCODED_KINDS.get(found.type, 'tagged')} ({found.type})"
        )
    return crossing(Crossing.RUNTIME, found.why)


def _refusal(
    site: CallSite, arg: Argument, never: str, job: Job, param: str | None, project: Project
) -> str:
    said = f"argument {arg.name} ({arg.source.strip()})"
    hint = _reads_hint(job, param, project) or "; pass the data the job needs instead"
    return (
        f"{said} is never storable ({never}), so every call would fall back to running "
        f"in-process, and for {_OTHER_FALLBACK[site.pattern]}{hint}, then apply again"
    )


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
