"""Work handed to a task queue: a duplicate enqueue is only as harmful as the task it runs.

``update_stats.delay_on_commit(pk)`` (Celery, ``.delay``, ``.apply_async``...) takes
the work out of the process: a retry of the job that made the call enqueues it again,
and the task then runs twice. That is a repeat a reader must weigh only when running
the task twice is one: when the task is a project function whose own verdict is
``idempotent`` (its work reads, overwrites, deletes...), two runs end where one does,
and the enqueue repeats nothing that matters. Celery's own guide asks the same of
tasks ("ideally task functions should be idempotent"); the scan checks it.

Tasks that enqueue each other (a stats task enqueueing itself for the parent object)
are decided together: every enqueued task is first taken as idempotent, and any task
whose verdict under that assumption is not is dropped, until none changes (the
greatest fixpoint: a task stays only if all it does, the enqueues of the tasks that
stay included, converges). A task whose verdict is anything else (``unknown``, a
``needs_key``, a send) leaves its enqueue a repeat, as before.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory._classify._effects import EffectAnalysis
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._trace import Trace
from inventory.models import EffectKind, Idempotency

# ``decide`` as ``_jobs`` binds it: (task, the enqueues taken as settled) -> its verdict
Decide = Callable[[str, dict[str, str]], Idempotency]


class EnqueuedTasks:
    """Which enqueue effects run a project task whose own work is idempotent."""

    def __init__(self, index: SymbolIndex, analysis: EffectAnalysis) -> None:
        self.index = index
        self.analysis = analysis
        self._task_of: dict[str, str | None] = {}
        self._idempotent: dict[frozenset[str], frozenset[str]] = {}

    def settled(self, traces: list[Trace], decide: Decide) -> dict[str, str]:
        """The enqueue APIs among ``traces`` whose task is idempotent, each with its task."""
        roots = self._tasks(traces)
        if not roots:
            return {}
        tasks = self._closure(roots)
        idempotent = self._idempotent.get(tasks)
        if idempotent is None:
            idempotent = self._fixpoint(tasks, decide)
            self._idempotent[tasks] = idempotent
        return {api: task for api, task in roots.items() if task in idempotent}

    def _tasks(self, traces: list[Trace]) -> dict[str, str]:
        found: dict[str, str] = {}
        for t in traces:
            if t.is_effect and t.kind == EffectKind.ENQUEUE and not t.guessed_via:
                task = self.task_of(t.api)
                if task is not None:
                    found[t.api] = task
        return found

    def task_of(self, api: str) -> str | None:
        """``app.tasks.update_stats.delay_on_commit`` -> ``app.tasks.update_stats``, when
        the name before the queue's method is a project function."""
        if api not in self._task_of:
            head, _, _ = api.rpartition(".")
            found = self.index.resolve(head) if head else None
            project = (
                found is not None
                and found.kind == SymbolKind.FUNCTION
                and found.name in self.index.functions
                and not self.index.is_library(found.name)
            )
            self._task_of[api] = found.name if project and found is not None else None
        return self._task_of[api]

    def _closure(self, roots: dict[str, str]) -> frozenset[str]:
        """The tasks ``roots`` run, and the tasks those enqueue, transitively."""
        seen: set[str] = set()
        todo = sorted(set(roots.values()))
        while todo:
            task = todo.pop()
            if task in seen:
                continue
            seen.add(task)
            self.analysis.analyse([task])
            todo += [t for t in self._tasks(self.analysis.traces(task)).values() if t not in seen]
        return frozenset(seen)

    def _fixpoint(self, tasks: frozenset[str], decide: Decide) -> frozenset[str]:
        idempotent = set(tasks)
        changed = True
        while changed:
            changed = False
            for task in sorted(idempotent):
                own = self._tasks(self.analysis.traces(task))
                settled = {api: t for api, t in own.items() if t in idempotent}
                if decide(task, settled) != Idempotency.IDEMPOTENT:
                    idempotent.discard(task)
                    changed = True
        return frozenset(idempotent)
