"""Which sites the codemods may touch, and why every other one is left alone.

By default only ``idempotent`` jobs move. A ``needs_key`` job moves only
once the user has declared where its idempotency key comes from; the rewrite
then passes ``idempotency_key=``. An ``unknown`` job moves only when named
with ``--job`` (or with ``--hold-unknown``, every one), and then *held*: registered
``@job(idempotency="unknown")``, which the runtime's gate runs inline until its
verdict is decided ``idempotent`` or a load test certifies it (``held_note`` says
what decides it).

``non_idempotent`` and ``unsafe`` jobs (and a ``needs_key`` job whose verdict
is ``non_idempotent`` without its declared key) are **guarded** jobs: never by
default, only when named with ``--job`` *and* given a key; they are registered
with the runtime's execution guard (``@job(..., idempotency="non_idempotent")``)
so the gate keeps them inline until a load test certifies them. An ``unsafe``
job also needs the human sign-off recorded in ``MIGRATION_PLAN.md``.

A site also stays put when the caller uses the result (``manual``), when the
caller handles the job's exceptions, when the job cannot be imported by a
worker (bound method, nested function), or when an argument is provably never
storable and the runtime's fallback would not run the site as it ran before
(``codemods._storable``). Arguments need no proof: each is JSON, carried by a
runtime codec, or checked at run time (the call falls back to running
in-process when it cannot be stored); the outcome says which, per argument.
A ``Thread`` subclass whose ``run`` uses only constructor data moves as a job of
that data (``codemods._threadjob``); a bound method of a module-level service
object moves as a wrapper job calling it on that object (``codemods._service``);
a nested function handed to a spawn is lifted to module level with its free
variables as parameters (``codemods._hoist``); a library callable handed to a
spawn moves as a wrapper job written beside the site (``codemods._library``).

The decision is one ordered table, ``RULES``: each rule reads the site's facts
(``_Facts``: the inventory's, and what apply derives from the files, each derived
once and only when a rule asks) and leaves the site, rewrites it, or passes it on.
docs/apply.md lists the rules in this order.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path

from codemods import (
    _django_target,
    _hoist,
    _library,
    _mail,
    _ordering,
    _service,
    _status_route,
    _storable,
    _threadjob,
    _transactions,
    _triggers,
)
from codemods._jobdefs import FunctionDefInfo
from codemods._project import Project
from codemods._types import (
    ApplyOptions,
    ArgumentCrossing,
    Crossing,
    DefKind,
    SiteOutcome,
    Status,
    StatusRoute,
    Target,
    Wrapper,
    manual_reason,
)
from inventory.config import MigrationTarget
from inventory.models import (
    DISPATCHED,
    TASK_RUNS_HERE,
    CallSite,
    EffectKind,
    Framework,
    Idempotency,
    Inventory,
    Job,
    Pattern,
)
from inventory.project import dotted_source

MOVED = "enqueues a queue_runtime @job"  # the status says "already moved"
_VALUE_PATTERNS = frozenset({Pattern.DIRECT_CALL, Pattern.RUN_IN_EXECUTOR})

_NEVER = {
    Idempotency.NON_IDEMPOTENT: "job is non_idempotent: a retry or a duplicate would repeat its effect",
    Idempotency.UNSAFE: "job is unsafe (money or account state): never moved until verified and load-tested",
}
_OPT_IN = " (moved only when named: --job {job}, with a declared key{signoff})"
_SIGNOFF_HINT = " and the sign-off recorded in MIGRATION_PLAN.md"


def guarded_verdict(job: Job) -> Idempotency | None:
    """``non_idempotent`` / ``unsafe`` when the job needs the execution guard to move, else None.

    A ``needs_key`` verdict that only a declared key gives a non-idempotent job
    counts as ``non_idempotent``: the key makes it safe only behind the guard.
    """
    if job.idempotency in (Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE):
        return job.idempotency
    if (
        job.idempotency is Idempotency.NEEDS_KEY
        and job.keyless_idempotency is Idempotency.NON_IDEMPOTENT
    ):
        return Idempotency.NON_IDEMPOTENT
    return None


_BOUND = (
    "bound method: the instance cannot be serialised: a worker has no object to call it on; "
    "make it a module-level function (or a @staticmethod) taking the data it reads of the "
    "instance, and apply again"
)
# A static or class method of a class defined inside a function: no name a worker imports.
_LOCAL_CLASS = (
    "{kind} of a class defined inside a function: a worker cannot import it; move the class "
    "(or the method, as a module-level function) to module level, and apply again"
)
_KIND_REASONS = {
    DefKind.METHOD: _BOUND,
    DefKind.NESTED: (
        "nested function: a worker cannot import it; move it to module level (passing what "
        "it reads of the enclosing function as arguments), and apply again"
    ),
    DefKind.NOT_FOUND: (
        "job definition not found in the scanned tree: it cannot be registered; scan the "
        "tree that defines it (or rescan if it moved), and apply again"
    ),
}


def select(
    inventory: Inventory,
    options: ApplyOptions,
    defs: dict[str, FunctionDefInfo | None],
    blocked: dict[str, str] | None = None,
    accept_202: bool = False,
    project: Project | None = None,
) -> tuple[list[Target], list[SiteOutcome]]:
    """Split the inventory's sites into rewrite targets and outcomes decided up front.

    ``blocked`` maps files that must not be touched (stale, dirty, unreadable)
    to the reason; a site in one, or whose job is defined in one, is skipped.
    ``accept_202``: a FastAPI handler that uses the result may be rewritten to
    answer 202 (there is an app to add the status endpoint to). A Flask or
    Django handler may when ``codemods._status_route`` places its status view.
    """
    targets: list[Target] = []
    outcomes: list[SiteOutcome] = []
    project = project or Project(Path(inventory.root))
    for site in inventory.sites:
        if options.jobs and site.job not in options.jobs and not _mail_named(site, options):
            continue
        job = inventory.job(site.job)
        callers = [c for c in inventory.sites_of(site.job) if c.location != site.location]
        decided = _decide(
            site,
            job,
            options,
            defs,
            blocked or {},
            accept_202,
            project,
            callers,
            inventory.atomic_requests,
        )
        if isinstance(decided, Target):
            targets.append(decided)
        else:
            outcomes.append(decided)
    return _triggers.one_schedule_per_job(_distinct_wrappers(targets), outcomes)


def _distinct_wrappers(targets: list[Target]) -> list[Target]:
    """Two wrappers of one name in one module must be the same function: else the later is renamed.

    Library-callable wrappers are named after the callable; two sites handing it
    over with other arguments need two functions.
    """
    seen: dict[tuple[str, str], str] = {}
    names = {(t.wrapper.path, t.wrapper.name) for t in targets if t.wrapper is not None}
    out: list[Target] = []
    for target in targets:
        wrapper = target.wrapper
        if wrapper is not None:
            key = (wrapper.path, wrapper.name)
            if key in seen and seen[key] != wrapper.source:
                n = 2
                while (wrapper.path, f"{wrapper.name}_{n}") in names:
                    n += 1
                new = f"{wrapper.name}_{n}"
                names.add((wrapper.path, new))
                source = wrapper.source.replace(f"def {wrapper.name}(", f"def {new}(", 1)
                wrapper = dataclasses.replace(wrapper, name=new, source=source)
                target = dataclasses.replace(target, wrapper=wrapper, qualpath=new)
            seen.setdefault((wrapper.path, wrapper.name), wrapper.source)
        out.append(target)
    return out


@dataclasses.dataclass
class _Facts:
    """What the rules read about one site: the inventory's facts, and what apply derives
    from the files (each derived fact computed once, when a rule first asks for it, so a
    site decided by its verdict reads no file)."""

    site: CallSite
    job: Job | None
    options: ApplyOptions
    defs: dict[str, FunctionDefInfo | None]
    blocked: dict[str, str]
    accept_202: bool
    project: Project
    callers: list[CallSite]
    atomic_requests: list[str]

    @property
    def known(self) -> Job:
        assert self.job is not None  # the rules after ``_unresolved`` only
        return self.job

    @functools.cached_property
    def threaded(self) -> tuple[Wrapper | None, list[str]] | str | None:
        """How a worker reaches the job when it is no module-level function: a Thread
        subclass's data, a service object's method, a library callable, a lifted nested
        function (the wrapper and its parameters), or why it cannot; None otherwise."""
        site, job, project = self.site, self.known, self.project
        return (
            _thread_job(site, job, project)
            or _service_job(site, job, self.defs, project)
            or _library.plan(site, job, project)
            or _nested_job(site, job, self.defs, project)
        )

    @functools.cached_property
    def trigger(self) -> _triggers.Trigger | str | None:
        if self.site.pattern is not Pattern.SCHEDULER:
            return None
        return _triggers.plan(self.site, self.known, self.project)

    @functools.cached_property
    def route(self) -> StatusRoute | None:
        return _status_route_for(self.site, self.project)

    @functools.cached_property
    def answers_202(self) -> bool:
        site = self.site
        if self.known.idempotency is Idempotency.UNKNOWN:
            return False  # a 202 answer changes the response even inline: never for a held job
        return site.result_used and (
            (self.accept_202 and _can_answer_202(site)) or self.route is not None
        )

    @functools.cached_property
    def storable(self) -> _storable.Storable | str:
        _, params = self.wrapped
        return _storable.check(self.site, self.known, params, self.project)

    @property
    def wrapped(self) -> tuple[Wrapper | None, list[str]]:
        threaded = self.threaded
        return threaded if isinstance(threaded, tuple) else (None, self.known.parameters)


_Decided = Target | SiteOutcome | None
_Rule = tuple[str, Callable[[_Facts], _Decided]]


def _moved(f: _Facts) -> _Decided:
    if f.site.pattern is not Pattern.ENQUEUE:
        return None
    return _rekeyed(f) or SiteOutcome(site=f.site, status=Status.ALREADY, reason=MOVED)


_KEYED = frozenset({Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE, Idempotency.NEEDS_KEY})
REKEYED = (
    "key added: `{job}` is {level} now, decided after this site was moved (a job moved "
    "held, or one whose code changed): the enqueue passes `idempotency_key=` built from the "
    "declared key `{key}`, so the runtime's execution guard runs one call once however often "
    "it is retried or enqueued again"
)


def _rekeyed(f: _Facts) -> Target | None:
    """A moved site of a job whose verdict now needs a key (moved held, then decided
    ``non_idempotent``; moved ``idempotent``, now ``needs_key``): with its key declared and
    the verdict rule letting the job move with it (named, signed off), the enqueue gets its
    ``idempotency_key=`` (``codemods._rewrites.rekey``); else the site stays as it is."""
    job = f.job
    if job is None or job.idempotency not in _KEYED or job.django_task:
        return None  # Django's task.enqueue() takes no queue options: no key to add
    key = f.options.keys.get(job.qualname)
    refused = _verdict_reason(job, f.options) if key is not None else _no_key(job)
    found = f.defs.get(job.qualname)
    note = REKEYED.format(job=job.qualname, level=job.idempotency.value, key=key)
    return Target(
        f.site,
        job,
        found.kind if found is not None else DefKind.FUNCTION,
        None if refused else key,  # no key: the rewrite leaves an enqueue without one, saying why
        qualpath=found.qualpath if found is not None else "",
        rekey=NO_KEY_YET.format(job=job.qualname, why=refused) if refused else note,
    )


NO_KEY_YET = (
    "already moved, and this enqueue passes no idempotency_key while `{job}`'s verdict needs "
    "one (decided after the site was moved): {why}; apply then adds the key here"
)


def _no_key(job: Job) -> str:
    hint = f" (suggested: {job.suggested_key})" if job.suggested_key else ""
    named = f" --job {job.qualname}" if guarded_verdict(job) else ""
    return (
        f'declare its key ([tool.migrator.jobs."{job.qualname}"] key = ..., or '
        f"--key {job.qualname}=TEMPLATE{hint}) and run `migrator apply{named}`"
    )


def _unresolved(f: _Facts) -> _Decided:
    if f.job is not None and not f.site.unresolved_reason.startswith(DISPATCHED):
        return None
    return _skip(f.site, f.site.unresolved_reason or "the job this site runs is not resolved")


TASK_RUN_HERE = (
    "`{job}` is a task of {broker}, and `.{method}(...)` runs it here on purpose, with no "
    "broker: its own queue already takes it out of the request ({enqueue}, once the worker "
    "has what it reads); apply does not put another queue's task on this one"
)
# How each broker's own API enqueues the task (calling a Huey task enqueues it).
_ITS_ENQUEUE = {
    "celery": "`{name}.delay(...)`",
    "huey": "`{name}(...)`",
    "dramatiq": "`{name}.send(...)`",
}
TASK_CALLED_HERE = (
    "`{job}` is a task of {broker}, run here in the request as a function: its own queue "
    "takes the call out of the request ({enqueue}, once the worker has what it reads); "
    "apply does not put another queue's task on this one (`@job` on the task would hide "
    "its own API, `.delay` and the rest, from every other caller)"
)
ASYNC_DJANGO_CALL = (
    "`{job}` is a Django task awaited through `.acall(...)`: its move is "
    "`await {name}.aenqueue(...)`, which apply does not write; make that change by hand"
)


def _task_run_here(f: _Facts) -> _Decided:
    """A task of another queue run in the caller (Celery's ``.apply``, Huey's
    ``.call_local``, Dramatiq's ``.fn``, or the task called as a function, which Celery
    and Dramatiq run in the caller): never stacked on a second queue, whose ``@job`` would
    hide the task's own API (``.delay``, ``.send``...) from the project's other callers. A
    Django task's ``.call(...)`` moves (its rewrite writes ``.enqueue(...)``); its
    ``.acall`` does not."""
    site, job = f.site, f.known
    written = _called_name(site.target_source)
    name, _, method = written.rpartition(".")
    if job.task_of:
        broker = job.task_of if job.task_of.startswith("a ") else job.task_of.capitalize()
        its_enqueue = _ITS_ENQUEUE.get(job.task_of, "its own enqueue")
        if method in TASK_RUNS_HERE:
            reason = TASK_RUN_HERE.format(
                job=job.qualname,
                broker=broker,
                method=method,
                enqueue=its_enqueue.format(name=name),
            )
        else:
            task = written if written.replace(".", "").isidentifier() else job.qualname
            reason = TASK_CALLED_HERE.format(
                job=job.qualname, broker=broker, enqueue=its_enqueue.format(name=task)
            )
        return _skip(site, reason)
    if job.django_task and method == "acall":
        return _skip(site, ASYNC_DJANGO_CALL.format(job=job.qualname, name=name))
    return None


def _called_name(written: str) -> str:
    """The callee of a site as written: ``t.apply`` of ``t.apply((1,))``, else as it is."""
    head, paren, _ = written.partition("(")
    return head.strip() if paren and head.strip().replace(".", "").isidentifier() else written


def _django_mail(f: _Facts) -> _Decided:
    site = f.site
    if site.target_source.startswith(_mail.DROP_INS):
        return SiteOutcome(site=site, status=Status.ALREADY, reason=_mail.ALREADY)
    if _mail.drop_in(site) is not None:
        return _delivery(
            site, f.known, f.options, f.defs, f.blocked, f.project, f.callers, f.atomic_requests
        )
    no_drop_in = _mail.no_drop_in(site)
    return _skip(site, no_drop_in) if no_drop_in is not None else None


def _inside(f: _Facts) -> _Decided:
    site, job = f.site, f.known
    if site.enclosing_function and site.enclosing_function == job.qualname:
        return _skip(site, _inside_reason(site, job))
    return None


def _run_inside(f: _Facts) -> _Decided:
    site, job = f.site, f.known
    if not site.run_inside:
        return None
    called = f"`{site.run_inside}(...)`"
    method = job.qualname.rsplit(".", 1)[-1]
    if method in _service.SAVES:
        return _skip(
            site,
            f"the job is {job.qualname}, which Django runs inside {called}: that call is not "
            "the job's own (its row is the caller's), so it cannot be enqueued; move the slow "
            f"part of `{method}` into a module-level function and call it here after the call "
            "(or from a post_save receiver of the model), then scan and apply again",
        )
    return _skip(
        site,
        f"the job is {job.qualname}, a signal receiver run inside {called} (the signal is sent "
        "there): that call is not the job's own, so it cannot be enqueued here; the receiver "
        "moves at its own site, where it is connected",
    )


ENDLESS = (
    "`{job}` never returns: the loop at {where} runs until its process stops, and a worker "
    "runs a job to its end (it would hold one for good, and run it again on another each time "
    "its lease ran out); naming the job or giving it a key changes nothing; keep it "
    "in-process, or make one round of the loop a function of its own, declare that a "
    'periodic job (`@job(every=timedelta(minutes=1))`, docs/runtime.md "Periodic jobs") in '
    "place of the loop and its start, and scan again"
)


def _endless(f: _Facts) -> _Decided:
    """A job that never returns (``Job.endless_loop``: a monitor, a hand-made scheduler) is
    never enqueued, whatever its verdict, named or held: a worker could not finish it."""
    loop = f.known.endless_loop
    if loop is None:
        return None
    where = f"{loop.path}:{loop.line}"
    return _skip(f.site, ENDLESS.format(job=f.known.qualname, where=where))


def _verdict(f: _Facts) -> _Decided:
    # decided before the job's definition is read (a dry run reads few files)
    # the request first: no verdict, name or key moves a job that acts on it
    reason = _request_hook_reason(f.known) or _verdict_reason(f.known, f.options)
    reason = reason or _process_state_reason(f.known, f.options)
    return _skip(f.site, reason) if reason else None


NO_WORK = (
    "the caller waits for this call to finish ({how}), and the scan found nothing `{job}` "
    "does: every call it makes is explained and none has an effect (no database write, "
    "message, file, request or state change); enqueued, it would save the request no work "
    "and the caller would no longer see what it raises (a check moved stops checking); if it "
    "does work the scan did not see (a call its catalogue calls pure, a library it does not "
    "read), declare that call in [[tool.migrator.catalogue.effect]] and scan again, or name "
    "the job (--job {job}) to move it anyway"
)


def _work_to_move(f: _Facts) -> _Decided:
    """A job in which the scan followed every call and found no effect is either dead work
    or work the scan does not see: where the caller waits for it (an awaited hand-off to a
    thread), its only outcome is what it raises, which an enqueue would lose (``await
    asyncio.to_thread(validate_upload, path)`` moved stops validating). A direct call is a
    site only where the scan found slow work, so it never reaches this rule with no effect.
    A job the caller does not wait for (a thread, a task) has no outcome the caller sees,
    and moves.
    A verdict pinned after review, or the job named, moves as before. Decided last, so that
    what it says moves the site does (a result read, an object changed, an argument never
    storable are the earlier rules' and their own reasons)."""
    job = f.known
    if job.effects or job.unexplained or job.pinned or job.qualname in f.options.jobs:
        return None
    if f.site.result_used:
        return None  # the result is its outcome: the caller reads it (a 202 answer serves it)
    if f.site.pattern is Pattern.DIRECT_CALL:
        return None  # a site only where the scan found slow work: never a job without effect
    how = _ordering.waited(f.site, f.project)
    return _skip(f.site, NO_WORK.format(how=how, job=job.qualname)) if how else None


REBOUND = (
    "`{name}` is bound again in its module (line {lines}): the name its callers use is not "
    "(always) the function apply would give `@job`, so `{name}.enqueue(...)` would not exist "
    "once the module is imported; write that wrapping as a decorator on the definition "
    "(`@wrapper` above `def {name}`), or drop the other binding, and apply again"
)


def _rebound(f: _Facts) -> str | None:
    """The job's module binds its name again after the definition (``Job.rebound_at``):
    ``@job`` on the definition is not what the name holds, unless a wrapper job written by
    apply calls the name (then it calls whatever the name holds, as the site did)."""
    wrapper, _ = f.wrapped
    if not f.known.rebound_at or wrapper is not None:
        return None
    lines = ", ".join(str(n) for n in f.known.rebound_at)
    return REBOUND.format(name=f.known.qualname.rpartition(".")[2], lines=lines)


def _place(f: _Facts) -> _Decided:
    reason = _place_reason(f.site, f.known, f.defs, f.blocked, f.threaded)
    reason = reason or _rebound(f)
    reason = reason or _class_overridden(f.site, f.known, f.defs, f.project)
    return _skip(f.site, reason) if reason else None


def _class_overridden(
    site: CallSite, job: Job, defs: dict[str, FunctionDefInfo | None], project: Project
) -> str | None:
    """A classmethod read from a class that may be a subclass (``cls.refresh``,
    ``self.refresh``, ``Mirror.refresh``) when a project subclass overrides it: read from
    that subclass it is the override, a plain classmethod without ``.enqueue``, and the
    rewritten call would raise. ``Catalog.refresh``, the class named, is the job itself."""
    found = defs.get(job.qualname)
    if found is None or found.kind is not DefKind.CLASSMETHOD:
        return None
    owner, _, method = job.qualname.rpartition(".")
    head = site.target_source.rpartition(".")[0]
    if head == owner.rpartition(".")[2]:
        return None
    override = _service.overridden(owner, method, project)
    if override is None:
        return None
    return (
        f"@classmethod `{site.target_source or method}` is read from a class that may be "
        f"{override}, which overrides it: there it is a plain classmethod, whose `.enqueue` "
        f"does not exist; give the override the same `@job`, or call "
        f"`{owner.rpartition('.')[2]}.{method}` by its class, and apply again"
    )


def _receiver(f: _Facts) -> _Decided:
    site = f.site
    if site.pattern is not Pattern.SIGNAL_RECEIVER:
        return None
    reason = _triggers.all_or_none(site, [site, *f.callers], f.known, f.project)
    reason = reason or _triggers.disconnected(f.known, f.project)
    return _skip(site, reason) if reason else None


def _schedule(f: _Facts) -> _Decided:
    return _skip(f.site, f.trigger) if isinstance(f.trigger, str) else None


def _result_read(f: _Facts) -> _Decided:
    site = f.site
    if not site.result_used or f.answers_202:
        return None
    return SiteOutcome(
        site=site, status=Status.MANUAL, reason=manual_reason(site), lines=site.result_use_lines
    )


def _exceptions(f: _Facts) -> _Decided:
    handlers = _handlers_around(f.site)
    if not handlers:
        return None
    return SiteOutcome(
        site=f.site, status=Status.MANUAL, reason=_handled_reason(handlers), lines=handlers
    )


CHANGED_OBJECT = (
    "the job changes the {param} it is given (`{what}`{where}): a worker runs it on a copy "
    "(a row read again, a snapshot, a value decoded from JSON), so the caller's `{held}` would "
    "not see the change, and a later save of it could write the old values back; make the "
    "job return or store what the caller needs and let the caller set it, then apply again, "
    "or keep it in-process"
)


def _changed_objects(f: _Facts) -> _Decided:
    """The job changes, in memory, an object the caller still holds (``Job.changes``, only
    what the scan proved: a call on it that it could not follow is left to the runtime's
    shadow evidence, except for a delete receiver's instance, decided with the receiver)."""
    site, job = f.site, f.known
    held = _held_objects(site, job)
    for change in job.changes or []:
        source = held.get(change.parameter)
        if source is None or not change.followed:
            continue
        param = "object" if change.parameter == "self" else change.parameter
        reason = CHANGED_OBJECT.format(
            param=param, what=change.change, where=change.where, held=source
        )
        return _skip(site, reason)
    return None


def _held_objects(site: CallSite, job: Job) -> dict[str, str]:
    """The job's parameters the caller hands an object it still holds, each with that object
    as written: a name or an attribute or item of one (``transaction``, ``self.order``), not
    a literal nor a value made for the call. A receiver's objects are the sender's."""
    if site.pattern is Pattern.SIGNAL_RECEIVER:
        # What the sender passes (``instance``, ``request``...); the ``**`` dict is made
        # for each receiver by ``Signal.send``, and ``sender`` is a class.
        changed = {c.parameter for c in job.changes or []}
        return {p: p for p in changed - {"sender", "kwargs"}}
    held: dict[str, str] = {}
    for argument in site.arguments:
        name = argument.name
        if name.startswith("#"):
            index = int(name[1:])
            name = job.parameters[index] if index < len(job.parameters) else ""
        if name and _ordering.held_root(argument.source) is not None:
            held[name] = argument.source
    head = site.target_source.rpartition(".")[0]
    if head and _ordering.held_root(head) is not None:
        held["self"] = head  # ``order.notify`` handed over: the method runs on ``order``
    return held


def _files_read_after(f: _Facts) -> _Decided:
    """The caller waited for the job (a direct call, an awaited hand-off to a thread) and
    reads, after it, a name it handed over, while the job writes files (``_ordering``)."""
    wrapper, _ = f.wrapped
    handed = wrapper.passes if wrapper is not None else ()
    found = _ordering.read_after(f.site, f.known, handed, f.project)
    if found is None:
        return None
    reason, lines = found
    return SiteOutcome(site=f.site, status=Status.MANUAL, reason=reason, lines=lines)


def _arguments(f: _Facts) -> _Decided:
    site, storable = f.site, f.storable
    if not isinstance(storable, str):
        return None
    if site.result_used:
        # Both block the move; the result's readers are what a human must decide about.
        return SiteOutcome(
            site=site,
            status=Status.MANUAL,
            reason=f"{manual_reason(site)}; besides, {storable}",
            lines=site.result_use_lines,
        )
    return _skip(site, storable)


def _served_result(f: _Facts) -> _Decided:
    # The status endpoint serves the job's result: it must be JSON.
    unservable = _storable.result_reason(f.known, f.project) if f.answers_202 else None
    if not unservable:
        return None
    return SiteOutcome(
        site=f.site,
        status=Status.MANUAL,
        reason=f"{manual_reason(f.site)}; a 202 answer needs {unservable}",
        lines=f.site.result_use_lines,
    )


def _rewrite(f: _Facts) -> _Decided:
    """Every rule before held: the site is rewritten (for the API the options write)."""
    site, job, storable = f.site, f.known, f.storable
    assert not isinstance(storable, str)
    wrapper, _ = f.wrapped
    instance = _bound_instance(site, job, f.defs, f.project) if wrapper is None else ()
    found = f.defs[job.qualname]
    # _place rules out jobs without a definition, but for a library callable's wrapper
    assert found is not None or wrapper is not None
    trigger = f.trigger
    target = Target(
        site,
        job,
        found.kind if found is not None else DefKind.FUNCTION,
        f.options.keys.get(job.qualname),
        accepted=site.result_used,
        qualpath=found.qualpath if found is not None else wrapper.name if wrapper else "",
        edits=storable.edits,
        wrapper=wrapper,
        status_route=f.route,
        schedule=trigger.arguments()
        if trigger is not None and not isinstance(trigger, str)
        else "",
        crossings=(*instance, *storable.crossings),
        held=held_note(job, _registered_as(wrapper))
        if job.idempotency is Idempotency.UNKNOWN
        else "",
    )
    return _for_api(target, f.options)


# The rules, in order: the first that decides a site (leaves it, with its reason, or
# rewrites it) is its outcome. docs/apply.md lists them (``test_docs_up_to_date``).
RULES: tuple[_Rule, ...] = (
    ("already moved", _moved),
    ("job resolved", _unresolved),
    ("task of another queue run here", _task_run_here),
    ("Django mail delivery", _django_mail),
    ("call inside its own job", _inside),
    ("job run inside the call", _run_inside),
    ("job that returns", _endless),
    ("verdict", _verdict),
    ("worker can import the job", _place),
    ("signal receiver", _receiver),
    ("schedule", _schedule),
    ("result read by the caller", _result_read),
    ("exceptions handled by the caller", _exceptions),
    ("objects the job changes", _changed_objects),
    ("files the caller reads after the call", _files_read_after),
    ("arguments", _arguments),
    ("result served by a status endpoint", _served_result),
    ("work to move", _work_to_move),
    ("rewrite", _rewrite),
)


def _decide(
    site: CallSite,
    job: Job | None,
    options: ApplyOptions,
    defs: dict[str, FunctionDefInfo | None],
    blocked: dict[str, str],
    accept_202: bool,
    project: Project,
    callers: list[CallSite] | None = None,
    atomic_requests: list[str] | None = None,
) -> Target | SiteOutcome:
    facts = _Facts(
        site, job, options, defs, blocked, accept_202, project, callers or [], atomic_requests or []
    )
    for _, rule in RULES:
        decided = rule(facts)
        if decided is not None:
            return decided
    raise AssertionError("the last rule decides every site")


def _for_api(target: Target, options: ApplyOptions) -> Target | SiteOutcome:
    """The target for the API the options write; a site Django's API cannot carry is skipped.
    A Django task run in the caller (``send.call(x)``) moves through Django's API whatever
    the target: its task object has no other (``send.options(...)`` is no method of it)."""
    django_call = target.job.django_task and _called_name(target.site.target_source).endswith(
        ".call"
    )
    if options.target is not MigrationTarget.DJANGO_TASKS and not django_call:
        return target
    refused = _django_target.refusal(target)
    if refused is not None:
        return _skip(target.site, refused)
    return dataclasses.replace(target, api=MigrationTarget.DJANGO_TASKS)


def _mail_named(site: CallSite, options: ApplyOptions) -> bool:
    """A Django mail call the user named (moved, or told why not: ``mail_admins``)."""
    django_mail = _mail.drop_in(site) is not None or _mail.no_drop_in(site) is not None
    return django_mail and _mail.named(site, options.jobs)


def _delivery(
    site: CallSite,
    job: Job,
    options: ApplyOptions,
    defs: dict[str, FunctionDefInfo | None],
    blocked: dict[str, str],
    project: Project,
    callers: list[CallSite] | None = None,
    atomic_requests: list[str] | None = None,
) -> Target | SiteOutcome:
    """A Django mail call: its delivery moves to a worker, the message built where it is."""
    held = (
        [f"{site.location.path}: {blocked[site.location.path]}"]
        if site.location.path in blocked
        else []
    )
    reason = held[0] if held else _mail.reason(site, options.jobs)
    if reason:
        return _skip(site, reason)
    inside = site.enclosing_function == job.qualname
    kept = _delivery_kept(
        site, job, project, (callers or []) if inside else [], atomic_requests or []
    )
    if kept is not None:
        reason, lines = kept
        return SiteOutcome(site=site, status=Status.MANUAL, reason=reason, lines=lines)
    found = defs.get(job.qualname)
    kind = found.kind if found is not None else DefKind.FUNCTION
    return Target(site, job, kind, qualpath=found.qualpath if found else "", delivery=True)


def _delivery_kept(
    site: CallSite,
    job: Job,
    project: Project,
    callers: list[CallSite],
    atomic_requests: list[str],
) -> tuple[str, list[int]] | None:
    """Why the call's send must keep failing in the request, and the lines that show it.

    Its send errors reach the caller and, when the call is inside the job the scan
    names (``callers`` then holds that job's call sites), the job's callers: a handler
    of them, or a transaction they would roll back, no longer runs or rolls back once
    the send happens in a worker. So does a read of the result, and a test patching
    the name the call goes through.
    """
    if site.result_used:
        reason = f"{manual_reason(site)}: once queued, the number of mails sent is not known here"
        return reason, site.result_use_lines
    found = _failure_caught(site)
    if found is not None:
        return found
    for caller in callers:
        up = _failure_caught(caller)
        if up is not None:
            where = f"{caller.location.path}:{caller.location.line}"
            return f"{job.qualname}'s call at {where}: {up[0]}", up[1]
    if atomic_requests and not _transactions.outside_requests(site, callers):
        return _transactions.requests_reason(atomic_requests), []
    patched = _mail.patched_in_tests(site, _callee(site, project), project.test_texts())
    if patched:
        return (
            f"the tests patch the name this call goes through ({', '.join(patched[:5])}): "
            "rewritten, the call no longer goes through it (and its import may go); "
            "patch queue_runtime.django_mail.send_mail, or read django.core.mail.outbox, "
            "then apply again"
        ), []
    return None


def _failure_caught(site: CallSite) -> tuple[str, list[int]] | None:
    """An ``except`` or a ``transaction.atomic`` around the call: the reason and its lines."""
    handlers = _handlers_around(site)
    if handlers:
        return _handled_reason(handlers), handlers
    atomic = site.surroundings.atomic_at
    if atomic:
        return _transactions.atomic_reason(atomic), atomic
    return None


def _callee(site: CallSite, project: Project) -> str | None:
    """The name the call at the site is written with (``send_mail``, ``mail.send_mail``)."""
    info = project.module_at(site.location.path)
    if info is None:
        return None
    for node in ast.walk(info.tree):
        if (
            isinstance(node, ast.Call)
            and node.lineno == site.location.line
            and node.col_offset == site.location.column
        ):
            return dotted_source(node.func)
    return None


def _thread_job(
    site: CallSite, job: Job, project: Project
) -> tuple[Wrapper, list[str]] | str | None:
    """A Thread-subclass site: its wrapper plan or why not; None for any other site."""
    if (
        site.pattern not in (Pattern.THREAD, Pattern.PROCESS)
        or _threadjob.thread_class(job) is None
    ):
        return None
    return _threadjob.plan(job, project)


def _service_job(
    site: CallSite, job: Job, defs: dict[str, FunctionDefInfo | None], project: Project
) -> tuple[Wrapper | None, list[str]] | str | None:
    """A bound method's site: a wrapper on its module-level object, the method itself when a
    codec stores its instance (no wrapper), or why not; None for any other site."""
    found = defs.get(job.qualname)
    if found is None or found.kind is not DefKind.METHOD:
        return None
    planned = _service.plan(site, job, project)
    if not isinstance(planned, str) or not _service.no_object(planned):
        return planned
    instance = _service.on_instance(site, job, project)
    return (None, job.parameters) if not isinstance(instance, str) else instance


def _bound_instance(
    site: CallSite, job: Job, defs: dict[str, FunctionDefInfo | None], project: Project
) -> tuple[ArgumentCrossing, ...]:
    """A method moved as itself: how its instance crosses (first, as the runtime passes it);
    a classmethod's class, by its import path."""
    found = defs.get(job.qualname)
    if found is not None and found.kind is DefKind.CLASSMETHOD:
        head = site.target_source.rpartition(".")[0] or found.qualpath.rpartition(".")[0]
        detail = f"class ({job.qualname.rpartition('.')[0]} or a subclass), by its import path"
        return (ArgumentCrossing(name="cls", source=head, how=Crossing.CODEC, detail=detail),)
    if found is None or found.kind is not DefKind.METHOD:
        return ()
    instance = _service.on_instance(site, job, project)
    return (instance,) if not isinstance(instance, str) else ()


def _nested_job(
    site: CallSite, job: Job, defs: dict[str, FunctionDefInfo | None], project: Project
) -> tuple[Wrapper, list[str]] | str | None:
    """A nested function's site: lifted to module level, or why not; None otherwise."""
    found = defs.get(job.qualname)
    if found is None or found.kind is not DefKind.NESTED:
        return None
    return _hoist.plan(site, job, project)


def _can_answer_202(site: CallSite) -> bool:
    """A FastAPI handler whose call (or awaited hand-off) yields the job's own return value."""
    return site.handler is Framework.FASTAPI and site.pattern in _VALUE_PATTERNS


def _status_route_for(site: CallSite, project: Project) -> StatusRoute | None:
    """A Flask or Django handler whose call yields the job's value: where its status view goes."""
    if not site.result_used or site.pattern not in _VALUE_PATTERNS:
        return None
    return _status_route.find(site, project)


def _place_reason(
    site: CallSite,
    job: Job,
    defs: dict[str, FunctionDefInfo | None],
    blocked: dict[str, str],
    threaded: tuple[Wrapper | None, list[str]] | str | None = None,
) -> str | None:
    """Why the site's pattern, its files or the job's definition rule a rewrite out."""
    paths = [site.location.path, job.location.path if job.location else ""]
    held = [f"{p}: {blocked[p]}" for p in dict.fromkeys(paths) if p in blocked]
    if held:
        return "; ".join(held)
    found = defs.get(job.qualname)
    if found is None and job.location is None and site.unresolved_reason:
        # A library callable: moved through a wrapper written beside the site, or why not.
        if isinstance(threaded, tuple):
            return None
        return threaded if isinstance(threaded, str) else site.unresolved_reason
    kind = found.kind if found else DefKind.NOT_FOUND
    if kind in (DefKind.METHOD, DefKind.NESTED) and threaded is not None:
        return threaded if isinstance(threaded, str) else None
    if (
        found is not None
        and kind in (DefKind.STATICMETHOD, DefKind.CLASSMETHOD)
        and "<locals>" in found.qualpath
    ):
        return _LOCAL_CLASS.format(kind=f"@{kind.value}")
    return _KIND_REASONS.get(kind)


def _verdict_reason(job: Job, options: ApplyOptions) -> str | None:
    guarded = guarded_verdict(job)
    if guarded is not None:
        return _guarded_reason(job, guarded, options)
    if job.idempotency is Idempotency.NEEDS_KEY and job.keyless_idempotency is Idempotency.UNKNOWN:
        return (
            "job idempotency is unknown without its declared key: pin a verdict "
            f'([tool.migrator.jobs."{job.qualname}"] idempotency, reason) first'
        )
    if job.idempotency is Idempotency.UNKNOWN:
        if job.qualname in options.jobs or options.hold_unknown:
            return None  # named: moves held, ``@job(idempotency="unknown")`` (held_note)
        return unknown_reason(job) + _HOLD_HINT.format(job=job.qualname)
    if job.idempotency in _NEVER:
        return _NEVER[job.idempotency]
    if job.idempotency is Idempotency.NEEDS_KEY and job.qualname not in options.keys:
        hint = f" (suggested: {job.suggested_key})" if job.suggested_key else ""
        return (
            'job needs an idempotency key: declare its source ([tool.migrator.jobs."<job>"] key = ...) '
            f"or with --key {job.qualname}=TEMPLATE{hint}"
        )
    return None


_HOLD_HINT = (
    "; or name the job (--job {job}, or --hold-unknown for every such job) to move it held: "
    "registered undecided, the gate runs it inline, as now, until its verdict is decided or a "
    "load test certifies it"
)
HELD = (
    "held: the scan could not decide the job's verdict, so it is registered "
    '`@job(idempotency="unknown")` and the gate runs it inline, as the site ran it before, '
    "until its verdict is decided `idempotent` (the runtime reads the inventory at "
    "inventory_path) or a load test certifies it; to decide it: {why}"
)


def held_note(job: Job, registered: str | None = None) -> str:
    """What a moved ``unknown`` job's outcome says: held inline, and what decides it.
    ``registered``: the wrapper job apply writes to run it (a library callable, a Thread
    subclass, a service method, a lifted nested function), the name the runtime and the
    next scan know it by, so the pin the note offers names that job."""
    why = unknown_reason(job, registered).removeprefix("job idempotency is unknown").lstrip(" :")
    return HELD.format(why=why)


def _registered_as(wrapper: Wrapper | None) -> str | None:
    """The name a wrapper job is registered under (``module.function``, as ``@job`` names it)."""
    return f"{wrapper.module}.{wrapper.name}" if wrapper is not None else None


def unknown_reason(job: Job, registered: str | None = None) -> str:
    """Why an ``unknown`` job's verdict is undecided, naming what the scan could not follow
    and the change that decides it: a catalogue entry per call, or a verdict pinned after
    review (on ``registered``, the wrapper job that runs it once moved, when there is one)."""
    pinned = registered or job.qualname
    pin = (
        f'pin the verdict after review ([tool.migrator.jobs."{pinned}"] idempotency = '
        '"idempotent", reason = "...") and scan again'
    )
    if registered is not None:
        pin += f" (`{registered}` is the job apply writes to run `{job.qualname}`)"
    explainable = [u for u in job.unexplained if u.entry is not None]
    others = [u.call for u in job.unexplained if u.entry is None]
    if not job.unexplained:
        why = job.evidence[-1].message if job.evidence else "no call it reaches is explained"
        return f"job idempotency is unknown ({why}): {pin}"
    parts = []
    if explainable:
        shown = ", ".join(f"`{u.call}` ({u.toml()})" for u in explainable[:3])
        more = f" and {len(explainable) - 3} more" if len(explainable) > 3 else ""
        parts.append(
            f"the scan could not follow {shown}{more}: say what each does in pyproject.toml, "
            "in a [[tool.migrator.catalogue.pure]] entry with those keys when it has no effect "
            "a retry would repeat, an [[tool.migrator.catalogue.effect]] entry with them and its "
            "effect otherwise, and scan again"
        )
    if others:
        parts.append(
            f"{_listed(others)} {'is' if len(others) == 1 else 'are'} reached only through a "
            "guessed call or decided at run time, which only a reviewer can settle"
        )
    return f"job idempotency is unknown: {'; '.join(parts)}; or {pin}"


def _listed(names: list[str], shown: int = 3) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(f"`{n}`" for n in names[:shown]) + more


def _guarded_reason(job: Job, verdict: Idempotency, options: ApplyOptions) -> str | None:
    """Why a non_idempotent / unsafe job named with --job still cannot move (None: it can)."""
    unsafe = verdict is Idempotency.UNSAFE
    if job.qualname not in options.jobs:
        base = (
            _NEVER[verdict]
            if job.idempotency is verdict
            else (f"job is non_idempotent without its declared key {job.declared_key!r}")
        )
        return base + _OPT_IN.format(job=job.qualname, signoff=_SIGNOFF_HINT if unsafe else "")
    if unsafe and job.qualname not in options.signoffs:
        return (
            f"job is unsafe: no sign-off recorded for it in MIGRATION_PLAN.md: a named human "
            f"fills in 'Sign-off: <name>, <date>' under its phase-4 item "
            f"(<!-- plan:{job.qualname}/signoff -->) first"
        )
    if job.qualname not in options.keys:
        hint = job.suggested_key or f"{job.qualname}:{{...}}"
        return (
            f"job is {verdict.value}: it moves only with an idempotency key: declare one "
            f'([tool.migrator.jobs."{job.qualname}"] key = "...") or pass '
            f"--key {job.qualname}={hint}"
        )
    return None


def _inside_reason(site: CallSite, job: Job) -> str:
    """The scan names the function around the site as its job: nothing here to enqueue."""
    call = f"`{site.target_source}(...)`" if site.target_source else "the call here"
    return (
        f"the job is {job.qualname}, the function this site is in, and {call} is what makes "
        "it slow: a call inside a job cannot enqueue that job; move the slow part into a "
        "module-level function, call it here, and apply again"
    )


def _handlers_around(site: CallSite) -> list[int]:
    """Lines of the ``except`` clauses that catch what the job raises at this site, else [].

    A direct call (or an awaited ``to_thread``: the patterns whose job gives its
    value, and raises, into the caller) inside ``try:`` hands the job's
    exceptions to those handlers: a message to the user, a fallback, a log line.
    An enqueue raises none of them, so the handler would never run when the job
    fails. A handler that only re-raises (``except X: raise``), passes or records the
    failure (a log line, a print, an error tracker) handles nothing: the request goes on
    the same way whether the job failed or not, and once queued the runtime records the
    failure (``CallSite.surroundings``, read by the scan).
    """
    return site.surroundings.caught_at if site.pattern in _VALUE_PATTERNS else []


def _handled_reason(lines: list[int]) -> str:
    where = ", ".join(str(n) for n in lines)
    return (
        f"the caller handles the job's exceptions (the except clause(s) at line(s) {where}): an "
        "enqueue raises none of them, so what the handler does when the job fails (a message, "
        "a fallback) would no longer happen; either keep this site inline, or move the "
        "handling into the job and rewrite the site by hand"
    )


def _request_hook_reason(job: Job) -> str | None:
    """The job acts on the request being served (``after_this_request``, ``flash``): a worker
    serves none, and with a server name it runs in a blank request whose response nobody
    gets, so the hook would never run and the message never shows; it stays."""
    hooks = [e for e in job.effects if e.kind is EffectKind.REQUEST_HOOK]
    if not hooks:
        return _request_read_reason(job)
    first = hooks[0]
    where = f"{first.location.path}:{first.location.line}"
    via = f", reached through {' -> '.join(first.chain)}" if len(first.chain) > 1 else ""
    return (
        f"the job acts on the request being served (`{first.api}` at {where}{via}): a worker "
        "serves no request (with a server name it runs in a blank one whose response nobody "
        "gets), so what it does to that request would be lost; keep it in-process, or move the "
        "work that does not touch the request into a job of its own, and apply again"
    )


REQUEST_READ = (
    "the job reads the request being served (`{api}` at {where}{via}): a worker serves no "
    'request, so there the read would fail ("Working outside of request context") or '
    "read a blank request's values, not the caller's; read it in the caller and pass the "
    "value as an argument (`{name}(..., value)` with the job taking it as a parameter), "
    "and apply again"
)


def _request_read_reason(job: Job) -> str | None:
    """The job reads the request being served through a context proxy (Flask's ``request``,
    ``g.user``, Flask-Login's ``current_user``): a worker serves none, so the read fails
    there or reads a blank request; it stays, named or not."""
    reads = [e for e in job.effects if e.kind is EffectKind.REQUEST_READ]
    if not reads:
        return None
    first = reads[0]
    where = f"{first.location.path}:{first.location.line}"
    via = f", reached through {' -> '.join(first.chain)}" if len(first.chain) > 1 else ""
    name = job.qualname.rpartition(".")[2]
    return REQUEST_READ.format(api=first.api, where=where, via=via, name=name)


def _process_state_reason(job: Job, options: ApplyOptions) -> str | None:
    """The job changes state its process holds in memory (``TASKS.pop(task_id)``, ``CACHE[k]
    = v``): run by a worker, it changes the worker's copy, and the process that served the
    request never sees it. Not a retry risk, so the verdict may be idempotent; moved only
    when named (a per-process cache any process may fill is the user's call)."""
    changes = [e for e in job.effects if e.kind is EffectKind.PROCESS_STATE]
    if not changes or job.qualname in options.jobs:
        return None
    first = changes[0]
    where = f"{first.location.path}:{first.location.line}"
    via = f", reached through {' -> '.join(first.chain)}" if len(first.chain) > 1 else ""
    more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
    return (
        f"the job changes state this process holds in memory (`{first.api}` at {where}{via})"
        f"{more}: a worker would change its own copy and this process would never see it; "
        "keep it in-process, or keep that state in a shared store (the cache, the database) "
        "and apply again; if it is only a cache any process may fill, name the job "
        f"(--job {job.qualname}) to move it anyway"
    )


def _skip(site: CallSite, reason: str) -> SiteOutcome:
    return SiteOutcome(site=site, status=Status.SKIPPED, reason=reason)
