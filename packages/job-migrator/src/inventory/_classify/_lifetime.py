"""Functions that never finish: they run until their process stops.

A queue's worker runs a job to its end: it holds the job (and a slot of its pool) until the
function returns, and a job whose lease runs out is delivered again. A function that runs
until its process stops is no such job, whatever it does each round:

- a **service**: a loop on a liveness flag that waits or consumes each round (``while not
  self._stop.is_set(): self._stop.wait(10); self.flush()``), a ``while True`` consumer of a
  queue or a stream (``item = jobs.get()``, ``async for message in pubsub.listen()``), or a
  server's ``serve_forever`` / an event loop's ``run_forever``. Started in a thread or a task
  it is the process's own machinery, not work a request hands off: not a site (the thread
  detectors already drop the ones they can see in the same module; this reads them across
  modules, and for asyncio tasks and executors too);
- a **loop forever** (an unbroken ``while True``, a monitor or a hand-made scheduler:
  ``while True: ping(); time.sleep(60)``): its rounds may be work (a periodic clean-up), so
  its site is reported, but the job never returns: ``Job.endless_loop`` says where, and
  ``migrator apply`` never enqueues it (its round belongs in a periodic job).

A function loops forever when its own body has the loop, or when it runs, as one of its own
calls, a function whose body does (``def start(): run_loop()``), as the spawn-wrapper rule
reads (``_wrappers``); a spawn site is dropped as a service only on its job's own body.
"""

from __future__ import annotations

from inventory._classify._graph import CallGraph
from inventory._classify._index import SymbolIndex
from inventory._extract.detectors._sites_threads import SERVER_RUNNERS
from inventory.models import Pattern
from inventory.summary import Fact, FactKind, FunctionInfo

LOOPS = (".serve_forever", ".run_forever")
LONG_RUNNING = frozenset({FactKind.LOOP_FOREVER, FactKind.SERVICE_LOOP})
# The patterns that start a function beside the caller and leave it running: a service
# started so is the process's machinery. (A receiver, an on_commit callback or a scheduler's
# job is run by its framework to its end.)
SPAWNS = frozenset(
    {
        Pattern.THREAD,
        Pattern.PROCESS,
        Pattern.ASYNCIO_TASK,
        Pattern.EXECUTOR_SUBMIT,
        Pattern.RUN_IN_EXECUTOR,
    }
)


def runs_long(fn: FunctionInfo | None) -> bool:
    """Its own body loops until the process stops (forever, or as a service)."""
    return fn is not None and any(fact.kind in LONG_RUNNING for fact in fn.facts)


def endless_loop(
    job: str, index: SymbolIndex, graph: CallGraph
) -> tuple[FunctionInfo, Fact] | None:
    """The loop that keeps ``job`` running until its process stops, and the function whose
    body has it (``job`` itself, or a function it calls); None when it returns."""
    fn = index.functions.get(job)
    if fn is None:
        return None
    for fact in fn.facts:
        if fact.kind in LONG_RUNNING:
            return fn, fact
    # One link further, only the plain form: a service loop is read from the words of its
    # condition (``while self.state not in states`` waits for a state, then returns).
    for callee in _callees(fn, index, graph):
        for fact in callee.facts:
            if fact.kind is FactKind.LOOP_FOREVER:
                return callee, fact
    return None


def is_service(job: str, index: SymbolIndex, graph: CallGraph, *, callees: bool = True) -> bool:
    """``job`` serves until the process stops: a service loop or a consumer loop in its
    body (or, with ``callees``, in a function it calls), a server's or an event loop's
    forever. A spawn site is dropped only on its job's own body (``callees=False``): a
    call of ``bus.wait(state)``, a loop until a state is reached, reads like a service
    loop, and silence needs more than one link of evidence."""
    if job.endswith(LOOPS):
        return True
    fn = index.functions.get(job)
    if fn is None:
        return False
    if any(c.target in SERVER_RUNNERS or c.target.endswith(LOOPS) for c in fn.calls):
        return True
    others = _callees(fn, index, graph) if callees else []
    return any(
        fact.kind == FactKind.SERVICE_LOOP
        for candidate in (fn, *others)
        for fact in candidate.facts
    )


def _callees(fn: FunctionInfo, index: SymbolIndex, graph: CallGraph) -> list[FunctionInfo]:
    found = []
    for call in fn.calls:
        callee = index.functions.get(graph.resolve_call(call, fn).function or "")
        if callee is not None and callee.qualname != fn.qualname:
            found.append(callee)
    return found
