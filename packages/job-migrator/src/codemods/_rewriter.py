"""One pass over a module that rewrites the selected call sites, statement by statement.

Each site is dispatched on its pattern to the transformer module for that
pattern. A site is only rewritten where the statement at its recorded line
has the expected shape and names the job: anything else leaves the code
alone and reports the site (a stale or moved position is never guessed at).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods import (
    _asyncio,
    _background_tasks,
    _direct_call,
    _executor,
    _fastapi_202,
    _on_commit,
    _signal,
    _thread,
)
from codemods._targets import already_enqueues, is_job_ref, statement_call
from codemods._types import Block, Edit, Skip, Status, Target
from inventory.models import Pattern

Rewriter = Callable[[Block, int, Target], Edit | Skip | None]

REWRITERS: dict[Pattern, Rewriter] = {
    Pattern.DIRECT_CALL: _direct_call.rewrite,
    Pattern.THREAD: _thread.rewrite,
    Pattern.PROCESS: _thread.rewrite,
    Pattern.EXECUTOR_SUBMIT: _executor.rewrite,
    Pattern.BACKGROUND_TASKS: _background_tasks.rewrite,
    Pattern.ASYNCIO_TASK: _asyncio.rewrite,
    Pattern.RUN_IN_EXECUTOR: _asyncio.rewrite,
    Pattern.ON_COMMIT: _on_commit.rewrite,
    Pattern.SIGNAL_RECEIVER: _signal.rewrite,
}

Outcome = tuple[Status, str]


@dataclass
class _Scope:
    """A function (or the module) being rewritten."""

    first: int  # first line, decorators included
    last: int
    node: cst.CSTNode  # the original function or module
    dropped: set[str] = field(default_factory=set)  # parameters a rewrite made removable

    @cached_property
    def names(self) -> Counter[str]:
        """Every Name in the original scope, nested blocks included (only computed if asked)."""
        return _names(self.node)


class RewriteCallSitesTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, targets: list[Target]) -> None:
        super().__init__()
        self.targets = targets
        self.outcomes: dict[int, Outcome] = {}  # index in targets -> outcome
        self._scopes: list[_Scope] = []

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        pos = self.get_metadata(PositionProvider, node)
        return pos.start.line, pos.end.line

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes.append(_Scope(0, 0, node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        first, last = self._lines(node)
        first = min([first, *(self._lines(d)[0] for d in node.decorators)])
        self._scopes.append(_Scope(first, last, node))

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        scope = self._scopes.pop()
        body_line = self._lines(original_node.body)[0]
        for i, target in enumerate(self.targets):
            in_header = scope.first <= target.site.location.line < body_line
            if in_header and i not in self.outcomes and _is_receiver_job(original_node, target):
                self.outcomes[i] = (Status.SKIPPED, _signal.RECEIVER_IS_JOB)
        if scope.dropped:
            return _background_tasks.drop_unused_params(updated_node, frozenset(scope.dropped))
        return updated_node

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(
            body=self._rewrite_body(original_node.body, updated_node.body)
        )

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = self._rewrite_body(original_node.body, updated_node.body)
        self._scopes.pop()
        return updated_node.with_changes(body=body)

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
        return [
            (i, t)
            for i, t in enumerate(self.targets)
            if t.site.pattern is Pattern.SIGNAL_RECEIVER
            and scope.first <= t.site.location.line <= scope.last
        ]

    def _apply(self, block: Block, index: int, i: int, target: Target) -> Edit | None:
        done = self.outcomes.get(i, (None,))[0] is Status.REWRITTEN
        if done and target.site.pattern is not Pattern.SIGNAL_RECEIVER:
            return None  # a receiver may call its job several times; other sites are one call
        if already_enqueues(block.statements[index], target):
            self.outcomes.setdefault(i, (Status.ALREADY, "already enqueues"))
            return None
        rewriter = _fastapi_202.rewrite if target.accepted else REWRITERS[target.site.pattern]
        result = rewriter(block, index, target)
        if isinstance(result, Skip):
            self.outcomes[i] = (result.status, result.reason)
        elif isinstance(result, Edit):
            self.outcomes[i] = (Status.REWRITTEN, "")
        return result if isinstance(result, Edit) else None


def _names(node: cst.CSTNode) -> Counter[str]:
    return Counter(n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name))


def _is_receiver_job(func: cst.FunctionDef, target: Target) -> bool:
    return target.site.pattern is Pattern.SIGNAL_RECEIVER and _signal.receiver_is_job(func, target)


def _calls_job(stmt: cst.SimpleStatementLine, target: Target) -> bool:
    call = statement_call(stmt)
    return call is not None and is_job_ref(call.func, target)


def rewrite_sites(
    module: cst.Module, targets: list[Target]
) -> tuple[cst.Module, dict[int, Outcome]]:
    """Rewrite ``targets`` in ``module``; targets without an outcome were not found."""
    transformer = RewriteCallSitesTransformer(targets)
    # The module was parsed for this pass alone: no defensive deep copy needed.
    updated = MetadataWrapper(module, unsafe_skip_copy=True).visit(transformer)
    return updated, transformer.outcomes
