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
stay included, converges). A task whose verdict is ``needs_key``, or that repeats
something (a send, an insert), leaves its enqueue a repeat, as before.

A task whose own verdict is ``unknown`` (it reaches a call the scan could not follow)
leaves the enqueue ``unknown`` too: a duplicate runs the task twice, and whether that
matters is exactly what is not known, so the enqueuing job is no more
``non_idempotent`` than a job calling the task directly would be. Its verdict rests on
the task's gaps, which it carries (``Job.unexplained``): explaining them decides the
task, and with it the enqueue. Which tasks are open is a fixpoint too: every task left
out above is first taken as open, and a task whose verdict under that assumption is
not ``unknown`` (it repeats something of its own, it is pinned) leaves, until none does.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory._classify._effects import EffectAnalysis
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._trace import Trace
from inventory._classify._verdict import NONE, Enqueues, TaskVerdict
from inventory.models import EffectKind, Idempotency, UnexplainedCall

# ``decide`` as ``_jobs`` binds it: (task, the enqueues taken as settled, those taken as
# open) -> its verdict
Decide = Callable[[str, Enqueues], TaskVerdict]
# a closure of tasks -> its idempotent tasks, its open tasks, the open tasks' gaps
_Decided = tuple[frozenset[str], frozenset[str], tuple[UnexplainedCall, ...]]


class EnqueuedTasks:
    """Which enqueue effects run a project task whose own work is idempotent, or unknown."""

    def __init__(self, index: SymbolIndex, analysis: EffectAnalysis) -> None:
        self.index = index
        self.analysis = analysis
        self._task_of: dict[str, str | None] = {}
        self._decided: dict[frozenset[str], _Decided] = {}

    def of(self, traces: list[Trace], decide: Decide) -> Enqueues:
        """The enqueue APIs among ``traces`` whose task is idempotent, and those whose task
        is unknown, each with its task."""
        roots = self._tasks(traces)
        if not roots:
            return NONE
        tasks = self._closure(roots)
        decided = self._decided.get(tasks)
        if decided is None:
            decided = self._decided[tasks] = self._decide(tasks, decide)
        idempotent, open_, unexplained = decided
        return Enqueues(
            {api: task for api, task in roots.items() if task in idempotent},
            {api: task for api, task in roots.items() if task in open_},
            unexplained if any(task in open_ for task in roots.values()) else (),
        )

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

    def _decide(self, tasks: frozenset[str], decide: Decide) -> _Decided:
        idempotent = self._fixpoint(set(tasks), frozenset(), Idempotency.IDEMPOTENT, decide)
        open_ = self._fixpoint(set(tasks - idempotent), idempotent, Idempotency.UNKNOWN, decide)
        found: dict[str, UnexplainedCall] = {}
        for task in sorted(open_):
            verdict = decide(task, self._enqueues(task, idempotent, open_))
            found.update((u.call, u) for u in verdict.unexplained if u.call not in found)
        return frozenset(idempotent), frozenset(open_), tuple(found[c] for c in sorted(found))

    def _fixpoint(
        self, kept: set[str], idempotent: frozenset[str], verdict: Idempotency, decide: Decide
    ) -> frozenset[str]:
        """The greatest set of ``kept`` whose tasks all have ``verdict`` when the enqueues of
        ``idempotent`` tasks are settled and those of ``kept`` open (for ``IDEMPOTENT``,
        ``kept`` is the idempotent set itself and nothing is open)."""
        changed = True
        while changed:
            changed = False
            for task in sorted(kept):
                if verdict == Idempotency.IDEMPOTENT:
                    enqueues = self._enqueues(task, frozenset(kept), frozenset())
                else:
                    enqueues = self._enqueues(task, idempotent, frozenset(kept))
                if decide(task, enqueues).idempotency != verdict:
                    kept.discard(task)
                    changed = True
        return frozenset(kept)

    def _enqueues(self, task: str, idempotent: frozenset[str], open_: frozenset[str]) -> Enqueues:
        own = self._tasks(self.analysis.traces(task))
        return Enqueues(
            {api: t for api, t in own.items() if t in idempotent},
            {api: t for api, t in own.items() if t in open_},
        )
