"""A nested function handed to a spawn is lifted to module level, its free variables as parameters.

``transaction.on_commit(inner)`` inside ``def save(pk)``, where ``inner`` reads
``pk`` of ``save``, becomes ``transaction.on_commit(lambda: _save_inner.enqueue(pk=pk))``
with the nested function moved to module level as the job::

    @job(pool="batch", idempotent=True)
    def _save_inner(pk):
        time_consuming(pk)

Only when the move keeps what the closure saw (Python binds a closure's free
variables late: the value at the time it runs): every free variable is a
parameter or local of the enclosing function bound before the site and never
rebound after it, nor inside a loop around the site; the nested function writes
none of them (``nonlocal``/``global``); it does not read the enclosing method's
``self``/``cls`` (a worker has no instance); it has plain parameters and no
decorators; it is defined in the enclosing function (directly, or in the block of
an ``if``, ``with``, ``try`` or ``match`` that also holds the site after it, never
in a loop, and only once), which is at module level or a method of a module-level
class; a free variable passed from inside a block is bound on every way to the def. When the enclosing function
also uses the nested one elsewhere, the nested one stays and calls the lifted
job's function; otherwise it goes. Everything else keeps a refusal naming what
stands in the way.
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from codemods._project import ModuleInfo, Project
from codemods._resolve import assignments, own_nodes
from codemods._types import Wrapper
from inventory.models import CallSite, Job, Pattern

_Def = ast.FunctionDef | ast.AsyncFunctionDef
# Where a closure is handed over to run later or elsewhere: a commit callback, a thread, a
# task, an executor (``pool.submit(inner)``, ``await asyncio.to_thread(inner)``,
# ``loop.run_in_executor(None, inner, x)``). A direct call of a nested function runs it in
# place (its site is the handler's own work, not one to lift).
_SPAWNS = frozenset(
    {Pattern.ON_COMMIT, Pattern.THREAD, Pattern.ASYNCIO_TASK}
    | {Pattern.RUN_IN_EXECUTOR, Pattern.EXECUTOR_SUBMIT}
)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
NESTED = (
    "nested function {name}: a worker cannot import it, and apply cannot lift it to module "
    "level here ({why}); move it to module level yourself (passing what it reads of the "
    "enclosing function as arguments), and apply again"
)


def plan(site: CallSite, job: Job, project: Project) -> tuple[Wrapper, list[str]] | str:
    """The lifted job and its parameters, or the true reason the nested function stays."""
    name = job.qualname.rsplit(".", 1)[-1]
    found = _find(site, job, project)
    if isinstance(found, str):
        return NESTED.format(name=name, why=found)
    info, top, outer, inner = found
    why = _unsafe(site, outer, inner)
    if isinstance(why, str):
        return NESTED.format(name=name, why=why)
    free = why
    source = _lifted_source(info, inner, _name(info, outer, inner), free)
    if source is None:
        return NESTED.format(name=name, why="its text cannot be re-indented to module level")
    params = [a.arg for a in inner.args.args]
    delegate = _used_elsewhere(outer, inner, site.location.line)
    wrapper = Wrapper(
        info.name,
        info.path,
        _name(info, outer, inner),
        top,
        source,
        passes=tuple(free),
        lifts=_qualpath(job, info),
        delegates=delegate,
    )
    return wrapper, [*params, *free]


def _qualpath(job: Job, info: ModuleInfo) -> str:
    return job.qualname.removeprefix(f"{info.name}.")


def _find(site: CallSite, job: Job, project: Project) -> tuple[ModuleInfo, str, _Def, _Def] | str:
    """The module, the top-level name holding it, the enclosing function and the nested one."""
    info = project.module_at(site.location.path)
    path = _qualpath(job, info) if info is not None else ""
    if info is None or job.location is None or job.location.path != site.location.path:
        return "it is not defined in the module of the site"
    parts = path.split(".")
    if len(parts) == 3 and parts[1] == "<locals>":
        top, outer_name, cls = parts[0], parts[0], None
    elif len(parts) == 4 and parts[2] == "<locals>":
        top, outer_name, cls = parts[0], parts[1], parts[0]
    else:
        return "it is nested more than one function deep"
    scope: list[ast.stmt] = info.tree.body
    if cls is not None:
        owner = info.classes.get(cls)
        if owner is None:
            return f"its class {cls} is not at module level"
        scope = owner.body
    outer = next((s for s in scope if isinstance(s, _Def) and s.name == outer_name), None)
    if outer is None:
        return f"its enclosing function {outer_name} is not found"
    way = _path_to(outer.body, parts[-1], in_loop=False)
    if way is None:
        return "it is not defined in the body of its enclosing function"
    if isinstance(way, str):
        return way
    defs = [n for n in own_nodes(outer) if isinstance(n, _Def) and n.name == parts[-1]]
    if len(defs) > 1:
        return f"the enclosing function defines {parts[-1]} {len(defs)} times"
    inner = way[-1][1]
    assert isinstance(inner, _Def)  # _path_to ends at the def
    return _block_reason(way, site.location.line) or (info, top, outer, inner)


# The statement lists a def in them may be bound in, and the site after it reached through.
_Path = list[tuple[list[ast.stmt], ast.stmt]]
_COMPOUND = (ast.If, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match, *_LOOPS)


def _path_to(body: list[ast.stmt], name: str, in_loop: bool) -> _Path | str | None:
    """From ``body`` down to the ``def name``: each statement list with its statement on the
    way (the last one is the def); None when not there, or why it cannot be lifted.

    Python binds a nested def when its statement runs, wherever it is in the enclosing
    function: directly in its body, or in the block of an ``if``, ``with``, ``try`` or
    ``match``. In a loop each round binds a new closure: not lifted.
    """
    for stmt in body:
        if isinstance(stmt, _Def) and stmt.name == name:
            return "it is defined inside a loop" if in_loop else [(body, stmt)]
        if not isinstance(stmt, _COMPOUND):
            continue
        for block in _blocks(stmt):
            found = _path_to(block, name, in_loop or isinstance(stmt, _LOOPS))
            if isinstance(found, list):
                return [(body, stmt), *found]
            if isinstance(found, str):
                return found
    return None


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement."""
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    if isinstance(stmt, ast.Try | ast.TryStar):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    return [b for b in (getattr(stmt, "body", []), getattr(stmt, "orelse", [])) if b]


def _block_reason(path: _Path, line: int) -> str | None:
    """A def inside a block is bound at the site only when the site follows it in that block."""
    if len(path) == 1:
        return None
    block, inner = path[-1]
    after = block[block.index(inner) + 1 :]
    if any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in after):
        return None
    return (
        f"it is defined in the block of the statement at line {path[-2][1].lineno}, which "
        "does not also hold the site: whether it is bound when the site runs depends on it"
    )


def _unsafe(site: CallSite, outer: _Def, inner: _Def) -> list[str] | str:
    """The free variables to pass (in order), or why lifting would change what runs."""
    if site.pattern not in _SPAWNS:
        return "the call is not a spawn (a commit callback, a thread, a task, an executor)"
    if inner.decorator_list:
        return "it is decorated"
    args = inner.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return "its parameters are not plain (defaults, *, ** or keyword-only)"
    line = site.location.line
    if not inner.end_lineno or not inner.end_lineno < line:
        return "it is defined after the site"
    for node in ast.walk(inner):
        if isinstance(node, ast.Nonlocal | ast.Global):
            return f"it rebinds {', '.join(node.names)} of an outer scope ({type(node).__name__.lower()})"
    free = _free(inner)
    outer_args = outer.args
    every = [*outer_args.posonlyargs, *outer_args.args, *outer_args.kwonlyargs]
    outer_params = [a.arg for a in [*every, outer_args.vararg, outer_args.kwarg] if a is not None]
    is_method = bool(outer_params) and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in outer.decorator_list
    )
    passes: list[str] = []
    for name in free:
        bound = (
            assignments(outer, name) + _local_imports(outer, name) + _other_bindings(outer, name)
        )
        if name not in outer_params and not bound and name != inner.name:
            continue  # a module-level name or a builtin: the worker's import binds it
        if name == inner.name:
            return "it calls itself through the enclosing function's name for it"
        if is_method and name == outer_params[0] and name in ("self", "cls"):
            return (
                f"it reads `{name}` of the enclosing method: a worker has no such object; "
                f"pass what it reads of `{name}` as arguments instead, and apply again"
            )
        if any(isinstance(b, _Def | ast.ClassDef) for b in bound):
            return (
                f"it uses `{name}`, a function or class defined in the enclosing function, "
                "which no worker can receive"
            )
        if _local_imports(outer, name):
            return f"it reads `{name}`, imported inside the enclosing function"
        lines = [_line(b) for b in bound]
        if any(n > line for n in lines):
            return (
                f"`{name}` is rebound after the site (line {max(lines)}): the closure would "
                "see the later value"
            )
        if name not in outer_params and not any(n < line for n in lines):
            return f"`{name}` is bound only after the site"
        for loop in _loops_around(outer, line):
            top, end = loop.lineno, loop.end_lineno or loop.lineno
            if any(top <= n <= end for n in lines) or _binds_loop(loop, name):
                return (
                    f"`{name}` changes in the loop around the site (line {loop.lineno}): each "
                    "closure would see its last value"
                )
        passes.append(name)
    return _undominated(outer, inner, passes, outer_params) or passes


def _undominated(outer: _Def, inner: _Def, passes: list[str], params: list[str]) -> str | None:
    """For a def inside a block: a passed variable that may be unbound when the site runs.

    The closure read it when it ran (a NameError there, in the thread or task); the site
    reads it at the enqueue, in the request. So each must be bound on every way to the
    def: a parameter, or an assignment (or ``with ... as``) directly in one of the blocks
    that lead to it, before the statement on the way.
    """
    path = _path_to(outer.body, inner.name, in_loop=False)
    if not isinstance(path, list) or len(path) == 1:
        return None
    for name in passes:
        if name not in params and not any(_binds_first(b, s, name) for b, s in path):
            return (
                f"`{name}` is not bound on every way to the site (only inside a block): "
                "the closure would fail in its thread or task where the enqueue would fail "
                "in the request"
            )
    return None


def _binds_first(block: list[ast.stmt], on_way: ast.stmt, name: str) -> bool:
    """``name`` bound in ``block`` before ``on_way`` runs, whatever branch is taken."""
    before = block[: block.index(on_way)]
    if isinstance(on_way, ast.With | ast.AsyncWith):
        before = [*before, on_way]
    return any(_assigns(stmt, name) for stmt in before)


def _assigns(stmt: ast.stmt, name: str) -> bool:
    """The statement itself binds ``name`` (not a block inside it)."""
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return any(
            i.optional_vars is not None and _target(i.optional_vars, name) for i in stmt.items
        )
    if isinstance(stmt, ast.Assign):
        return any(_target(t, name) for t in stmt.targets)
    return isinstance(stmt, ast.AnnAssign) and stmt.value is not None and _target(stmt.target, name)


def _target(node: ast.expr, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, ast.Tuple | ast.List):
        return any(_target(e, name) for e in node.elts)
    return isinstance(node, ast.Starred) and _target(node.value, name)


def _free(inner: _Def) -> list[str]:
    """Names ``inner`` reads that nothing inside it binds, in order of first use."""
    bound = {a.arg for a in ast.walk(inner.args) if isinstance(a, ast.arg)}
    for node in ast.walk(inner):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, _Def | ast.ClassDef) and node is not inner:
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name.split(".")[0]) for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    loads = [
        n.id
        for n in sorted(
            (n for n in ast.walk(inner) if isinstance(n, ast.Name)),
            key=lambda n: (n.lineno, n.col_offset),
        )
        if isinstance(n.ctx, ast.Load)
    ]
    # A builtin's name too: the enclosing function may bind it (a parameter named ``id``).
    return [n for n in dict.fromkeys(loads) if n not in bound]


def _line(node: ast.AST) -> int:
    """The line a binding is at (a ``with`` item's is its target's)."""
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return node.optional_vars.lineno
    return int(getattr(node, "lineno", 0))


def _other_bindings(fn: _Def, name: str) -> list[ast.AST]:
    """What else binds ``name`` in ``fn``: a def or class, ``except ... as``, a match capture."""
    found: list[ast.AST] = []
    for node in own_nodes(fn):
        if isinstance(node, _Def | ast.ClassDef | ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
            if getattr(node, "name", None) == name:
                found.append(node)
        elif (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Store | ast.Del)
            and node.id == name
            and not assignments(fn, name)
        ):
            found.append(node)
    return found


def _local_imports(fn: _Def, name: str) -> list[ast.AST]:
    return [
        node
        for node in own_nodes(fn)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    ]


def _loops_around(fn: _Def, line: int) -> list[ast.For | ast.AsyncFor | ast.While]:
    return [
        n
        for n in own_nodes(fn)
        if isinstance(n, _LOOPS) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]


def _binds_loop(loop: ast.For | ast.AsyncFor | ast.While, name: str) -> bool:
    if isinstance(loop, ast.While):
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(loop.target))


def _used_elsewhere(outer: _Def, inner: _Def, line: int) -> bool:
    """The enclosing function names the nested one anywhere but at the site's line."""
    return any(
        isinstance(n, ast.Name) and n.id == inner.name and n.lineno != line
        for n in ast.walk(outer)
        if not (inner.lineno <= getattr(n, "lineno", 0) <= (inner.end_lineno or 0))
    )


def _name(info: ModuleInfo, outer: _Def, inner: _Def) -> str:
    base = f"_{outer.name.strip('_')}_{inner.name.strip('_')}"
    bound = {*info.imports, *info.assignments, *info.classes, *info.functions}
    name, n = base, 2
    while name in bound:
        name, n = f"{base}_{n}", n + 1
    return name


def _lifted_source(info: ModuleInfo, inner: _Def, name: str, free: list[str]) -> str | None:
    """The nested function's own text at module level, renamed, its free variables appended."""
    lines = info.text.splitlines(keepends=True)[inner.lineno - 1 : inner.end_lineno]
    text = textwrap.dedent("".join(lines))
    try:
        node = cst.parse_statement(text)
    except cst.ParserSyntaxError:
        return None
    if not isinstance(node, cst.FunctionDef):
        return None
    extra = [cst.Param(cst.Name(v)) for v in free]
    params = node.params.with_changes(params=[*node.params.params, *extra])
    lifted = node.with_changes(name=cst.Name(name), params=params, leading_lines=[])
    source = cst.Module(body=[lifted]).code
    try:
        ast.parse(source)
    except SyntaxError:
        return None
    return source
