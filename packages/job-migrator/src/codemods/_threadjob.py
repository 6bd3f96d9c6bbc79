"""A ``Thread`` subclass whose ``run`` uses only constructor data becomes a job of that data.

``MailThread(subject, body).start()`` -> ``run_mail_thread.enqueue(subject, body)``,
with a thin job written after the class::

    @job(pool="batch")
    def run_mail_thread(subject: str, body: str):
        MailThread(subject=subject, body=body).run()

Only when it is provably the same work: the class derives from
``threading.Thread`` (or ``multiprocessing.Process``); its ``__init__`` only
calls the base ``__init__`` and stores its parameters (``self.x = expr``); ``run``
reads no ``self`` attribute but those, and calls no other method of it. The
constructor then does nothing but record data, so building the object in the
worker and calling ``run()`` there does what the thread did.
"""

from __future__ import annotations

import ast
import re

from codemods._project import ModuleInfo, Project, module_name
from codemods._resolve import Where, resolve_expr
from codemods._types import Wrapper
from inventory.models import Job

_Def = ast.FunctionDef | ast.AsyncFunctionDef
_BASES = frozenset(
    {"threading.Thread", "multiprocessing.Process", "multiprocessing.context.Process"}
)


def thread_class(job: Job) -> str | None:
    """``Cls`` when the job is ``pkg.mod.Cls.run`` (a Thread-subclass site's job)."""
    parts = job.qualname.rsplit(".", 2)
    return parts[1] if len(parts) == 3 and parts[2] == "run" else None


def plan(job: Job, project: Project) -> tuple[Wrapper, list[str]] | str:
    """The wrapper and its parameters, or why the class is not a job of its constructor's data."""
    cls_name = thread_class(job)
    info = project.module_at(job.location.path) if job.location and cls_name else None
    if info is None or cls_name not in info.classes:
        return "bound method: the instance cannot be serialised"
    cls = info.classes[cls_name]
    if not _is_thread(cls, Where(project, info)):
        return "bound method: the instance cannot be serialised"
    methods = {s.name: s for s in cls.body if isinstance(s, _Def)}
    init = methods.get("__init__")
    stored = _stored(init) if init is not None else set()
    problem = (
        _extra_methods(methods)
        or (None if stored is not None else _INIT_REASON)
        or _run_reads(methods, stored or set())
    )
    if problem:
        return f"Thread subclass {cls_name}: {problem}"
    params = [a.arg for a in init.args.args[1:]] if init is not None else []
    return _wrapper(info, cls_name, init, job), params


_INIT_REASON = "its __init__ does more than store its parameters"


def _is_thread(cls: ast.ClassDef, where: Where) -> bool:
    return any(resolve_expr(b, where) in _BASES for b in cls.bases)


def _extra_methods(methods: dict[str, _Def]) -> str | None:
    if "run" not in methods:
        return "it has no run()"
    extra = sorted(set(methods) - {"__init__", "run"})
    return f"run() may use its other methods ({', '.join(extra)})" if extra else None


def _stored(init: _Def) -> set[str] | None:
    """The ``self`` attributes ``__init__`` sets from its parameters; None if it does anything else."""
    args = init.args
    if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs:
        return None
    params = {a.arg for a in args.args[1:]}
    stored: set[str] = set()
    for stmt in init.body:
        if _is_docstring(stmt) or _is_base_init(stmt):
            continue
        target = (
            stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        )
        if not (isinstance(target, ast.Attribute) and _is_self(target.value)):
            return None
        assert isinstance(stmt, ast.Assign)
        if not _only_names(stmt.value, params):
            return None
        stored.add(target.attr)
    return stored


def _run_reads(methods: dict[str, _Def], stored: set[str]) -> str | None:
    for node in ast.walk(methods["run"]):
        if isinstance(node, ast.Attribute) and _is_self(node.value) and node.attr not in stored:
            return f"run() reads self.{node.attr}, which the constructor does not set"
        if (
            isinstance(node, ast.Name)
            and node.id == "self"
            and not _as_receiver(node, methods["run"])
        ):
            return "run() passes self on"
    return None


def _as_receiver(name: ast.Name, fn: _Def) -> bool:
    return any(isinstance(n, ast.Attribute) and n.value is name for n in ast.walk(fn))


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_base_init(stmt: ast.stmt) -> bool:
    """``super().__init__(...)`` or ``Thread.__init__(self, ...)``."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    func = stmt.value.func
    return isinstance(func, ast.Attribute) and func.attr == "__init__"


def _only_names(value: ast.expr, params: set[str]) -> bool:
    names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    return not calls and all(n in params for n in names)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _wrapper(info: ModuleInfo, cls_name: str, init: _Def | None, job: Job) -> Wrapper:
    assert job.location is not None
    args = init.args.args[1:] if init is not None else []
    defaults = init.args.defaults if init is not None else []
    first_default = len(args) - len(defaults)
    params = ", ".join(
        info.segment(a)
        + (f"={info.segment(defaults[i - first_default])}" if i >= first_default else "")
        for i, a in enumerate(args)
    )
    passed = ", ".join(f"{a.arg}={a.arg}" for a in args)
    name = f"run_{_snake(cls_name)}"
    source = (
        f"def {name}({params}) -> None:\n"
        f'    """`{cls_name}(...).run()` on a worker instead of a thread (written by `migrator apply`)."""\n'
        f"    {cls_name}({passed}).run()\n"
    )
    return Wrapper(module_name(job.location.path), job.location.path, name, cls_name, source)
