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
keeps the enqueue a repeat: a duplicate message is known to be sent, and what the task
does with it is what is not known, so the lower bound stands, as for any publish whose
consumer the scan cannot see. The evidence names the task and the calls it could not
follow: explaining them decides the task, and an idempotent task settles the enqueue.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory._classify._effects import EffectAnalysis
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._trace import Trace
from inventory._classify._verdict import NONE, Enqueues, Verdict
from inventory.models import EffectKind, Idempotency

# ``decide`` as ``_jobs`` binds it: (task, the enqueues taken as settled) -> its verdict
Decide = Callable[[str, Enqueues], Verdict]
# a closure of tasks -> its idempotent tasks, and its unknown ones with the calls each
# could not follow
_Decided = tuple[frozenset[str], dict[str, tuple[str, ...]]]


class EnqueuedTasks:
    """Which enqueue effects run a project task whose own work is idempotent (or unknown)."""

    def __init__(self, index: SymbolIndex, analysis: EffectAnalysis) -> None:
        self.index = index
        self.analysis = analysis
        self._task_of: dict[str, str | None] = {}
        self._decided: dict[frozenset[str], _Decided] = {}

    def of(self, traces: list[Trace], decide: Decide) -> Enqueues:
        """The enqueue APIs among ``traces`` whose task is idempotent, and those whose task
        is unknown (with the calls it could not follow), each with its task."""
        roots = self._tasks(traces)
        if not roots:
            return NONE
        tasks = self._closure(roots)
        decided = self._decided.get(tasks)
        if decided is None:
            decided = self._decided[tasks] = self._decide(tasks, decide)
        idempotent, unknown = decided
        return Enqueues(
            {api: task for api, task in roots.items() if task in idempotent},
            {api: task for api, task in roots.items() if task in unknown},
            {task: gaps for task, gaps in unknown.items() if task in roots.values()},
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
        idempotent = set(tasks)
        changed = True
        while changed:
            changed = False
            for task in sorted(idempotent):
                if (
                    decide(task, self._enqueues(task, idempotent)).idempotency
                    != Idempotency.IDEMPOTENT
                ):
                    idempotent.discard(task)
                    changed = True
        unknown: dict[str, tuple[str, ...]] = {}
        for task in sorted(tasks - idempotent):
            verdict = decide(task, self._enqueues(task, idempotent))
            if verdict.idempotency == Idempotency.UNKNOWN:
                unknown[task] = tuple(u.call for u in verdict.unexplained)
        return frozenset(idempotent), unknown

    def _enqueues(self, task: str, idempotent: set[str]) -> Enqueues:
        own = self._tasks(self.analysis.traces(task))
        return Enqueues({api: t for api, t in own.items() if t in idempotent}, {}, {})
