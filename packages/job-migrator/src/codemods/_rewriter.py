"""One pass over a module that rewrites the selected call sites, statement by statement.

Each site is dispatched on its pattern to the module for that pattern in
``_rewrites``. A site is only rewritten where the statement at its recorded
line has the expected shape and names the job: anything else leaves the code
alone and reports the site (a stale or moved position is never guessed at).
:func:`rewrite_file` then applies the module-level edits the rewrites asked
for (imports) and returns one typed outcome per target; it never raises.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods._edits.imports import (
    add_import,
    project_packages,
    remove_imports_made_unused,
    remove_unused_imports,
)
from codemods._edits.params import drop_dead_lookups, drop_unused_params
from codemods._edits.wrappers import add_wrapper, retire_nested
from codemods._project import module_name
from codemods._rewrites import (
    asyncio_handoff,
    background_tasks,
    direct_call,
    django_202,
    django_mail,
    executor,
    fastapi_202,
    flask_202,
    on_commit,
    periodic,
    rekey,
    signal_connect,
    signal_receiver,
    thread,
)
from codemods._rewrites.enqueue import (
    already_enqueues,
    already_reason,
    is_job_ref,
    key_imports,
)
from codemods._syntax import statement_call
from codemods._types import (
    Block,
    Edit,
    Failed,
    Import,
    Rewritten,
    Skip,
    Skipped,
    Status,
    Target,
    TargetOutcome,
    manual_reason,
)
from inventory.models import Framework, Pattern

Rewrite = Callable[[Block, int, Target], Edit | Skip | None]

# Looked up per site (not bound at import), so a test can swap one rewrite.
REWRITERS: dict[Pattern, Rewrite] = {
    Pattern.DIRECT_CALL: direct_call.rewrite,
    Pattern.THREAD: thread.rewrite,
    Pattern.PROCESS: thread.rewrite,
    Pattern.EXECUTOR_SUBMIT: executor.rewrite,
    Pattern.BACKGROUND_TASKS: background_tasks.rewrite,
    Pattern.ASYNCIO_TASK: asyncio_handoff.rewrite,
    Pattern.RUN_IN_EXECUTOR: asyncio_handoff.rewrite,
    Pattern.ON_COMMIT: on_commit.rewrite,
    Pattern.SIGNAL_RECEIVER: signal_receiver.rewrite,
    Pattern.SCHEDULER: periodic.rewrite,
    Pattern.ENQUEUE: rekey.rewrite,  # a moved site whose job now needs its key
}

# A handler that answers with the job's result: the 202 rewrite of its framework.
ACCEPTED: dict[Framework, Rewrite] = {
    Framework.FASTAPI: fastapi_202.rewrite,
    Framework.FLASK: flask_202.rewrite,
    Framework.DJANGO: django_202.rewrite,
}

_SNAPSHOT = Import("queue_runtime.codecs", signal_receiver.SNAPSHOT)
NOT_FOUND = (
    "not found at the recorded position (line {line}): the code there has another shape; rescan"
)
# A direct call through a local name for the job (``w = send; w(x)``), or for one of the
# callables the paths before it bind: the call is found, but it is not written as the job.
THROUGH_NAME = (
    "line {line} calls the job through `{name}`, a local name bound to `{job}` (or to one of "
    "several callables, chosen on the paths before the call): apply rewrites a call written "
    "as the job; call `{job}(...)` by its name where it is chosen, and apply again"
)
# The scan reached the job through a call apply has no rewrite for: a project's own
# function or method that spawns what it is handed (a spawn wrapper, docs/scan.md).
VIA_WRAPPER = (
    "line {line} hands the job to `{callee}`, which the scan followed to a spawn inside it "
    "(a project's spawn wrapper); apply rewrites the spawn calls themselves "
    "(asyncio.create_task, on_commit, executor.submit, ...), not calls of a wrapper, so this "
    "call stays as written: hand the job to the spawn call itself here and apply moves it"
)


@dataclass
class _Scope:
    """A function (or the module) being rewritten."""

    first: int  # first line, decorators included
    last: int
    node: cst.CSTNode  # the original function or module
    dropped: set[str] = field(default_factory=set)  # parameters a rewrite made removable
    rewrote: bool = False  # a site in this scope was rewritten: dead lookups may be left

    @cached_property
    def names(self) -> Counter[str]:
        """Every Name in the original scope, nested blocks included (only computed if asked)."""
        return _names(self.node)


class RewriteCallSitesTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, targets: list[Target], path: str = "") -> None:
        super().__init__()
        self.targets = targets
        self._here = module_name(path) if path else ""
        self._tops: list[tuple[int, int, cst.BaseStatement]] = []  # the module's statements
        self._pending: dict[int, list[cst.FunctionDef]] = {}  # id(top statement) -> receivers
        # id(rewritten top statement) -> functions to insert (before, after) in leave_Module
        self._extras: dict[int, tuple[list[cst.FunctionDef], list[cst.FunctionDef]]] = {}
        self._made: dict[str, bool] = {}  # receivers added for connect calls: by value?
        self.outcomes: dict[int, TargetOutcome] = {}  # index in targets -> outcome
        self.adds: list[Import] = []  # what the rewritten code needs imported
        self.removes: list[Import] = []  # imports it may no longer need
        self._scopes: list[_Scope] = []
        self._module_names: frozenset[str] = frozenset()  # top-level defs and classes

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        pos = self.get_metadata(PositionProvider, node)
        return pos.start.line, pos.end.line

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes.append(_Scope(0, 0, node))
        self._tops = [(*self._lines(stmt), stmt) for stmt in node.body]
        self._module_names = frozenset(
            n.name.value for n in node.body if isinstance(n, cst.FunctionDef | cst.ClassDef)
        ) | _used(node, signal_receiver.SNAPSHOT)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        first, last = self._lines(node)
        first = min([first, *(self._lines(d)[0] for d in node.decorators)])
        self._scopes.append(_Scope(first, last, node))

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        scope = self._scopes.pop()
        body_line = self._lines(original_node.body)[0]
        receivers: list[cst.FunctionDef] = []
        for i, target in enumerate(self.targets):
            in_header = scope.first <= target.site.location.line < body_line
            if in_header and i not in self.outcomes:
                receivers += self._split_receiver(original_node, i, target)
                updated_node = self._unschedule(updated_node, i, target)
        if scope.rewrote:
            updated_node = drop_dead_lookups(original_node, updated_node)
        if scope.dropped:
            updated_node = drop_unused_params(updated_node, frozenset(scope.dropped))
        if receivers:  # the receiver became the job: its decorators went to the new receiver
            job = updated_node.with_changes(decorators=[])
            return self._around(job, self._pending.pop(id(original_node), []), receivers)
        return self._after_receivers(original_node, updated_node)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        return self._after_receivers(original_node, updated_node)

    # A connect call inside a module-level ``if``/``try``/``with``/``for``/``while`` block
    # (``if settings.DEBUG: signal.connect(job)``): its receiver goes before the block, defined
    # whether or not the block runs, so the registration keeps the block's condition.
    def _leave_block(
        self, original_node: cst.BaseCompoundStatement, updated_node: cst.BaseCompoundStatement
    ) -> cst.BaseStatement:
        return self._after_receivers(original_node, updated_node)

    leave_If = leave_Try = leave_With = leave_For = leave_While = _leave_block

    def _after_receivers(
        self, original: cst.BaseStatement, updated: cst.BaseStatement
    ) -> cst.BaseStatement:
        """A top-level def or class holding rewritten connect calls, after their receivers."""
        made = self._pending.pop(id(original), [])
        return self._around(updated, made, [])

    def _around(
        self, node: cst.BaseStatement, before: list[cst.FunctionDef], after: list[cst.FunctionDef]
    ) -> cst.BaseStatement:
        """A top-level statement with new functions to put around it, once the module's sites
        are rewritten: inserted now, they would shift the statement indexes those rewrites use
        (a site after an ``if`` block that gained a receiver was "not found")."""
        if before or after:
            self._extras[id(node)] = (before, after)
        return node

    def _split_receiver(
        self, func: cst.FunctionDef, i: int, target: Target
    ) -> list[cst.FunctionDef]:
        """A signal site recorded at the receiver's header, when the receiver is the job: the
        new receiver that enqueues it (the function itself stays, as the job)."""
        if target.site.pattern is not Pattern.SIGNAL_RECEIVER or len(self._scopes) != 1:
            return []
        split = signal_receiver.split_receiver(func, target, self._module_names)
        if isinstance(split, Skip):
            self.outcomes[i] = Skipped(target, split.reason, split.status)
            return []
        if split is None:
            return []
        self.outcomes[i] = Rewritten(target)
        if signal_receiver.snapshots(func):  # a post_delete receiver: the instance by value
            self.adds.append(_SNAPSHOT)
        return [split[1]]

    def _unschedule(self, func: cst.FunctionDef, i: int, target: Target) -> cst.FunctionDef:
        """A scheduler site recorded at the job's own ``@scheduled_job`` decorator."""
        if target.site.pattern is not Pattern.SCHEDULER or func.name.value != target.name:
            return func
        result = periodic.remove_decorator(func, target)
        if isinstance(result, Skip):
            self.outcomes[i] = Skipped(target, result.reason, result.status)
            return func
        self.outcomes[i] = Rewritten(target)
        return result

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(
            body=self._rewrite_body(original_node.body, updated_node.body)
        )

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = self._rewrite_body(original_node.body, updated_node.body)
        self._scopes.pop()
        expanded: list[cst.BaseStatement] = []
        for stmt in body:
            before, after = self._extras.get(id(stmt), ([], []))
            expanded += [*before, stmt, *after]
        return updated_node.with_changes(body=expanded)

    def _rewrite_body(
        self, originals: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> list[cst.BaseStatement]:
        found = [
            (index, i, target)
            for index, original in enumerate(originals)
            if isinstance(original, cst.SimpleStatementLine)
            for i, target in self._targets_for(original)
        ]
        if not found:
            return list(updated)
        scope = self._scopes[-1]
        block = Block(updated, scope.names)
        replacements: dict[int, list[cst.BaseStatement]] = {}
        for index, i, target in found:
            edit = self._apply(block, index, i, target)
            if edit is not None:
                replacements.update(edit.replacements)
                scope.dropped.update(edit.dropped_params)
                scope.rewrote = True
        return [
            new for index, stmt in enumerate(updated) for new in replacements.get(index, [stmt])
        ]

    def _targets_for(self, stmt: cst.SimpleStatementLine) -> list[tuple[int, Target]]:
        first, last = self._lines(stmt)
        found = {i: t for i, t in enumerate(self.targets) if first <= t.site.location.line <= last}
        found.update((i, t) for i, t in self._receivers_around() if _calls_job(stmt, t))
        return sorted(found.items(), key=lambda item: item[0])

    def _receivers_around(self) -> list[tuple[int, Target]]:
        """Signal sites recorded at the receiver (decorator or def line) enclosing this statement."""
        scope = self._scopes[-1]
        receiver = scope.node.name.value if isinstance(scope.node, cst.FunctionDef) else None
        return [
            (i, t)
            for i, t in enumerate(self.targets)
            if t.site.pattern is Pattern.SIGNAL_RECEIVER
            and scope.first <= t.site.location.line <= scope.last
            # the receiver is the job: skipped at its header, never rewritten inside
            and f"{module_name(t.site.location.path)}.{receiver}" != t.job.qualname
        ]

    def _apply(self, block: Block, index: int, i: int, target: Target) -> Edit | None:
        done = isinstance(self.outcomes.get(i), Rewritten)
        if done and target.site.pattern is not Pattern.SIGNAL_RECEIVER:
            return None  # a receiver may call its job several times; other sites are one call
        if target.site.pattern is not Pattern.ENQUEUE and already_enqueues(
            block.statements[index], target
        ):
            self.outcomes.setdefault(i, Skipped(target, already_reason(target), Status.ALREADY))
            return None
        if target.site.pattern is Pattern.SIGNAL_RECEIVER and signal_connect.is_connect(
            statement_call(block.statements[index]), target
        ):
            return self._connect(block, index, i, target)
        deleted = self._inside_delete_receiver(target, block.statements[index])
        copied = self._by_value(block, index) if deleted else block
        if deleted and copied is None:
            self.outcomes[i] = Skipped(target, signal_receiver.held_reason(deleted))
            return None
        block = copied or block
        rewrite = _rewrite_for(target)
        result = rewrite(block, index, target)
        if isinstance(result, Skip):
            self.outcomes[i] = Skipped(target, result.reason, result.status)
            return None
        if isinstance(result, Edit):
            self.outcomes[i] = Rewritten(target)
            self.adds.extend([*result.adds, *([_SNAPSHOT] if deleted else [])])
            self.removes.extend(result.removes)
        return result

    def _connect(self, block: Block, index: int, i: int, target: Target) -> Edit | None:
        """``signal.connect(job, ...)``: registers ``<job>_receiver`` instead, added at module
        level before the top-level statement holding the call."""
        stmt = block.statements[index]
        call = statement_call(stmt)
        assert call is not None  # is_connect was checked
        made = signal_connect.receiver(call, target, self._here)
        problem = made if isinstance(made, Skip) else self._connect_problem(target, call)
        if problem is not None or isinstance(made, Skip):
            reason = problem.reason if problem is not None else ""
            self.outcomes[i] = Skipped(target, reason)
            return None
        new_call, func = made
        new = cst.ensure_type(stmt.deep_replace(call, new_call), cst.SimpleStatementLine)
        top = self._top(target.site.location.line)
        fresh = func.name.value not in self._made
        self._made[func.name.value] = signal_connect.by_value(call)
        self.outcomes[i] = Rewritten(target)
        if signal_connect.by_value(call):
            self.adds.append(_SNAPSHOT)
        if fresh and isinstance(top, cst.SimpleStatementLine):  # a module-level connect call
            spaced = new.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            return Edit(replacements={index: [_spaced(func), spaced]})
        if fresh:
            self._pending.setdefault(id(top), []).append(_spaced(func))
        return Edit(replacements={index: [new]})

    def _connect_problem(self, target: Target, call: cst.Call) -> Skip | None:
        top = self._top(target.site.location.line)
        name = signal_connect.receiver_name(target, signal_connect.by_value(call))
        if top is None:
            return Skip(signal_connect.NESTED.format(kind="?"))
        if name in self._module_names and name not in self._made:
            return Skip(signal_receiver.TAKEN.format(name=name))
        if self._made.get(name, signal_connect.by_value(call)) != signal_connect.by_value(call):
            return Skip(signal_receiver.TAKEN.format(name=name))  # made for another signal
        if signal_connect.by_value(call) and signal_receiver.SNAPSHOT in self._module_names:
            return Skip(signal_receiver.TAKEN.format(name=signal_receiver.SNAPSHOT))
        return None

    def _top(self, line: int) -> cst.BaseStatement | None:
        """The module's statement holding ``line``."""
        return next((stmt for first, last, stmt in self._tops if first <= line <= last), None)

    def _by_value(self, block: Block, index: int) -> Block | None:
        """In a ``post_delete`` receiver, the job call with ``snapshot(instance)``; None when
        the instance cannot go by value (another signal, ``**kwargs``, the name is taken)."""
        scope = self._scopes[-1].node
        assert isinstance(scope, cst.FunctionDef)  # _inside_delete_receiver found a receiver
        if not signal_receiver.snapshots(scope) or signal_receiver.SNAPSHOT in self._module_names:
            return None
        return signal_receiver.instance_by_value(block, index)

    def _inside_delete_receiver(self, target: Target, stmt: cst.BaseStatement) -> str | None:
        """The job handed the deleted instance in a ``pre_delete`` / ``post_delete`` receiver:
        that signal, else None."""
        scope = self._scopes[-1].node
        if target.site.pattern is not Pattern.SIGNAL_RECEIVER or not isinstance(
            scope, cst.FunctionDef
        ):
            return None
        call = statement_call(stmt)
        if call is None or not signal_receiver.hands_on_instance(call):
            return None
        return signal_receiver.delete_receiver(scope)


def _rewrite_for(target: Target) -> Rewrite:
    if target.delivery:
        return django_mail.rewrite
    if not target.accepted:
        return REWRITERS[target.site.pattern]
    return ACCEPTED.get(target.site.handler or Framework.FASTAPI, fastapi_202.rewrite)


def _names(node: cst.CSTNode) -> Counter[str]:
    return Counter(n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name))


def _spaced(func: cst.FunctionDef) -> cst.FunctionDef:
    return func.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])


def _used(node: cst.CSTNode, name: str) -> frozenset[str]:
    """``{name}`` when the module uses the name anywhere (bound or read), else empty."""
    return frozenset({name}) if m.findall(node, m.Name(name)) else frozenset()


def _calls_job(stmt: cst.SimpleStatementLine, target: Target) -> bool:
    call = statement_call(stmt)
    return call is not None and is_job_ref(call.func, target)


@dataclass(frozen=True)
class FileRewrite:
    """One file after the pass: its new module (None: left as it was) and an outcome per target."""

    module: cst.Module | None
    outcomes: list[TargetOutcome]


def rewrite_file(path: str, source: str, targets: list[Target]) -> FileRewrite:
    """Rewrite ``targets`` (all sites in ``path``) in ``source``. Never raises."""
    try:
        return _rewrite_file(path, source, targets)
    # The per-file runner: whatever a rewrite raises becomes that file's outcome.
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return FileRewrite(None, [Failed(t, error) for t in targets])


def _not_rewritten(source: str, target: Target) -> Skipped:
    """Why no rewrite took the site: a wrapper's call at its position, a result the handler
    reads where no 202 answer can stand in for it, or a changed shape."""
    if target.accepted:
        # A 202 answer replaces a result the handler returns or binds as a statement of its
        # own; read elsewhere (an ``if`` test, part of a larger expression) it stays.
        return Skipped(target, manual_reason(target.site), Status.MANUAL)
    return Skipped(target, _unmatched(source, target))


def _unmatched(source: str, target: Target) -> str:
    where, names = target.site.location, _SPAWN_NAMES.get(target.site.pattern)
    lines = source.splitlines()
    text = lines[where.line - 1][where.column :] if 0 < where.line <= len(lines) else ""
    callee = re.match(r"\s*(?:await\s+)?([A-Za-z_][\w.]*)\(", text)
    if names and callee and callee.group(1).rsplit(".", 1)[-1] not in names:
        return VIA_WRAPPER.format(line=where.line, callee=callee.group(1))
    job = target.site.target_source or target.job.qualname.rpartition(".")[2]
    if not names and callee and callee.group(1).isidentifier() and callee.group(1) != job:
        return THROUGH_NAME.format(line=where.line, name=callee.group(1), job=job)
    return NOT_FOUND.format(line=where.line)


# The calls a spawn pattern's rewrite knows, by last name: another call at such a site's
# position is a project's wrapper that the scan followed. (Threads and processes are left
# out: a Thread subclass's constructor has any name.)
_SPAWN_NAMES: dict[Pattern, frozenset[str]] = {
    Pattern.ASYNCIO_TASK: frozenset({"create_task", "ensure_future", "start_soon"}),
    Pattern.RUN_IN_EXECUTOR: frozenset({"run_in_executor", "to_thread"}),
    Pattern.EXECUTOR_SUBMIT: frozenset({"submit", "map"}),
    Pattern.BACKGROUND_TASKS: frozenset({"add_task"}),
    Pattern.ON_COMMIT: frozenset({"on_commit"}),
}


def _rewrite_file(path: str, source: str, targets: list[Target]) -> FileRewrite:
    transformer = RewriteCallSitesTransformer(targets, path)
    original = cst.parse_module(source)
    # The module was parsed for this pass alone: no defensive deep copy needed.
    wrapper = MetadataWrapper(original, unsafe_skip_copy=True)
    module = wrapper.visit(transformer)
    outcomes = [
        transformer.outcomes.get(i) or _not_rewritten(source, t) for i, t in enumerate(targets)
    ]
    first_party = project_packages([path], [t.job.qualname for t in targets])
    # A wrapper written into this module uses names of its imports (a library callable's
    # object): it is in place before the imports a rewrite left unused are dropped.
    for o in outcomes:
        if isinstance(o, Rewritten) and o.target.wrapper and o.target.wrapper.path == path:
            module = retire_nested(add_wrapper(module, o.target.wrapper), o.target.wrapper)
    module = remove_unused_imports(module, transformer.removes)
    module = remove_imports_made_unused(original, module)
    wanted = [*transformer.adds, *_key_functions(outcomes), *_wrapper_imports(path, outcomes)]
    for found in dict.fromkeys(wanted):
        module = add_import(module, found.module, found.name, first_party)
    return FileRewrite(module, outcomes)


def _wrapper_imports(path: str, outcomes: list[TargetOutcome]) -> list[Import]:
    """``from pkg.mod import run_x`` for each wrapper a rewritten site of another module enqueues."""
    here = module_name(path)
    return [
        Import(o.target.wrapper.module, o.target.wrapper.name)
        for o in outcomes
        if isinstance(o, Rewritten) and o.target.wrapper and o.target.wrapper.module != here
    ]


def _key_functions(outcomes: list[TargetOutcome]) -> list[Import]:
    """``from pkg.mod import func`` for each key function (or digest) a rewritten site now calls."""
    wanted: list[Import] = []
    for outcome in outcomes:
        if isinstance(outcome, Rewritten):  # a key function, or digest_key for a {*} key
            wanted += [Import(m, n) for m, n in key_imports(outcome.target.key_template)]
    return wanted
