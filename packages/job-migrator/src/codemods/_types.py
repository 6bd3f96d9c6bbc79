"""Every type the codemods share: options in, outcomes out.

One small module, read by all the others and importing none of them (the
Fixit habit): a transformer never raises for a site it cannot handle, it
returns a :class:`Skip`; a pass over a file returns one :data:`TargetOutcome`
per target (:class:`Rewritten`, :class:`Skipped` or :class:`Failed`); a run
over the tree returns an :class:`ApplyResult` that says, per site, what
happened and why.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import libcst as cst
from pydantic import BaseModel, ConfigDict, Field

from inventory.config import MigrationTarget
from inventory.models import CallSite, Framework, Job, files_changed_note

# A rewritten Django mail call (codemods._mail): what moved of it.
DELIVERY_NOTE = (
    "its delivery: the message is built here, a worker sends it (queue_runtime.django_mail)"
)


class CodemodError(Exception):
    """The codemods could not run."""


class Status(StrEnum):
    REWRITTEN = "rewritten"
    SKIPPED = "skipped"  # never rewritten: the reason says why
    MANUAL = "manual"  # allowed, but the caller consumes the result: a human decides
    ALREADY = "already"  # the site already enqueues (a second run)


class DefKind(StrEnum):
    """Where a job function is defined, which decides whether a worker can import it."""

    FUNCTION = "function"  # module level: importable by name
    STATICMETHOD = "staticmethod"  # importable as Class.name, no instance needed
    METHOD = "method"  # needs an instance: cannot be serialised
    CLASSMETHOD = "classmethod"
    NESTED = "nested"  # defined inside another function: a worker cannot import it
    NOT_FOUND = "not_found"  # outside the scanned tree, or moved since the scan


class ApplyOptions(BaseModel):
    """What the user asked for (CLI flags, or a caller in Python)."""

    model_config = ConfigDict(frozen=True)

    jobs: tuple[str, ...] = Field(
        default=(), description="Only these job qualnames (all if empty)."
    )
    keys: dict[str, str] = Field(
        default_factory=dict,
        description="Job qualname -> idempotency key template, e.g. 'refund-{order_id}'.",
    )
    pools: dict[str, str] = Field(default_factory=dict, description="Job qualname -> pool.")
    signoffs: dict[str, str] = Field(
        default_factory=dict,
        description="Job qualname -> its recorded human sign-off (MIGRATION_PLAN.md, phase 4): "
        "an unsafe job named with --job moves only with one.",
    )
    default_pool: str = "batch"
    allow_dirty: bool = False
    max_sites: int | None = Field(default=None, ge=1)
    rescan: bool = Field(default=True, description="Rescan stale files; refuse them when False.")
    hold_unknown: bool = Field(
        default=False,
        description="Also move every job the scan could not decide, held: registered "
        '`@job(idempotency="unknown")`, run inline by the gate until decided or certified '
        "(as --job does for one).",
    )
    target: MigrationTarget = Field(
        default=MigrationTarget.QUEUE_RUNTIME,
        description="The API written: queue_runtime's @job, or Django's @task ([tool.migrator] target).",
    )


class Crossing(StrEnum):
    """How one argument of a moved call crosses into the queue."""

    JSON = "JSON"  # plain JSON, proven from the code
    CODEC = "codec"  # a runtime codec carries it (a model by reference, a tagged type)
    RUNTIME = "checked at run time"  # unproven: encoded at enqueue, or the call falls back


RUNTIME_NOTE = "checked at run time: falls back to running in-process if not storable"


class ArgumentCrossing(BaseModel):
    """One argument of a moved site and how it will cross (shown per site and in the PR text)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="The parameter, or '#0', '#1'... for positional arguments.")
    source: str
    how: Crossing
    detail: str = Field(default="", description="CODEC: 'kind (type)'; else a note.")
    falls_back: bool = Field(
        default=False, description="Provably never storable: every call runs in-process."
    )

    def describe(self) -> str:
        if self.how is Crossing.CODEC:
            return f"codec: {self.detail}"
        if self.falls_back:
            return f"{self.how.value}: {self.detail}"
        base = "JSON" if self.how is Crossing.JSON else RUNTIME_NOTE
        return f"{base} ({self.detail})" if self.detail else base


class SiteOutcome(BaseModel):
    site: CallSite
    status: Status
    reason: str = ""
    lines: list[int] = Field(
        default_factory=list, description="Lines that consume the result (manual)."
    )
    crossings: list[ArgumentCrossing] = Field(
        default_factory=list, description="Rewritten: how each argument crosses into the queue."
    )

    def arguments_note(self) -> str:
        """``order: codec: model instance (shop.models.Order); subject: JSON``."""
        return "; ".join(f"{c.source.strip()}: {c.describe()}" for c in self.crossings)


class FileChange(BaseModel):
    path: str = Field(description="POSIX, relative to the root.")
    before: str
    after: str
    created: bool = Field(default=False, description="A new file (``before`` is empty).")

    def unified_diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile="/dev/null" if self.created else f"a/{self.path}",
                tofile=f"b/{self.path}",
            )
        )


class JobBatch(BaseModel):
    """Jobs that go into one branch, smallest risk first."""

    jobs: list[str]
    sites: int


class ApplyResult(BaseModel):
    root: str
    changes: list[FileChange] = Field(default_factory=list)
    outcomes: list[SiteOutcome] = Field(default_factory=list)
    refused: dict[str, str] = Field(
        default_factory=dict, description="path -> why it was not touched."
    )
    jobs: list[str] = Field(default_factory=list, description="Jobs rewritten, in commit order.")
    rescanned: list[str] = Field(
        default_factory=list,
        description="Files rescanned because they changed (every file the inventory names "
        "when it was written by an older migrator).",
    )
    dirty: list[str] = Field(
        default_factory=list,
        description="Files with uncommitted changes the migration needs to change: "
        "`write` refuses the whole change set while any is listed.",
    )
    records: list[Job] = Field(
        default_factory=list,
        description="The plan's own record of each moved job (verdict, evidence), for the PR text.",
    )
    worker: str = Field(
        default="",
        description="What `queue-runtime worker` needs for this app (framework context).",
    )

    def record(self, qualname: str) -> Job | None:
        """The moved job ``qualname`` as the plan saw it (None: not moved by this plan)."""
        return next((j for j in self.records if j.qualname == qualname), None)

    def by_status(self, status: Status) -> list[SiteOutcome]:
        return [o for o in self.outcomes if o.status is status]

    def delivered_only(self, qualname: str) -> bool:
        """Only Django mail deliveries of the moved job ``qualname`` moved: the job stays."""
        mine = [o for o in self.by_status(Status.REWRITTEN) if o.site.job == qualname]
        return bool(mine) and all(o.reason == DELIVERY_NOTE for o in mine)

    @property
    def diff(self) -> str:
        return "".join(change.unified_diff() for change in self.changes)


@dataclass(frozen=True)
class ArgEdit:
    """An argument rewritten on its way into the queue: ``_("Hi")`` -> ``str(_("Hi"))``."""

    source: str  # the argument as written at the site
    replacement: str


@dataclass(frozen=True)
class Wrapper:
    """A thin module-level job written next to what it runs (a Thread subclass, a service object's method).

    ``source`` is the function without its ``@job`` line; it goes after the
    top-level definition ``after`` in ``path`` (module ``module``).
    """

    module: str
    path: str
    name: str
    after: str
    source: str
    # A lifted nested function (codemods._hoist): the site passes these free variables by
    # keyword; ``lifts`` is the nested function's qualpath in the module, removed there (or,
    # ``delegates``, kept calling the lifted one when its enclosing function uses it elsewhere).
    passes: tuple[str, ...] = ()
    lifts: str = ""
    delegates: bool = False


@dataclass(frozen=True)
class StatusRoute:
    """Where a Flask or Django handler's status endpoint goes, found before any rewrite.

    Flask: ``path`` is the handler's module and ``owner`` the app or blueprint
    its route is on (the status view joins it there). Django: ``path`` is the
    app's ``urls.py`` and ``owner`` its package (None: top level); the view
    goes in a new module beside it. ``url_name`` is what the 202 answer
    reverses (``.job_status``, ``orders:job_status``); ``source`` is the text
    of ``path`` the route was found in.
    """

    framework: Framework
    path: str
    owner: str | None
    url_name: str
    source: str = field(default="", repr=False, compare=False)
    view_exists: bool = False  # Django: a first run already created the status view module


@dataclass(frozen=True)
class Target:
    """A selected site with what its transformer needs to rewrite it."""

    site: CallSite
    job: Job
    kind: DefKind
    key_template: str | None = None
    accepted: bool = False  # the handler uses the result: answer 202 with the job's status URL
    qualpath: str = ""  # the job's definition inside its module: "fn", "Class.fn"
    edits: tuple[ArgEdit, ...] = ()  # arguments changed on the way in (str(), .pk)
    wrapper: Wrapper | None = None  # the site enqueues this wrapper instead of the job
    status_route: StatusRoute | None = None  # Flask, Django: where its status endpoint goes
    schedule: str = (
        ""  # a scheduler registration's @job arguments: 'every="15m"' (codemods._triggers)
    )
    delivery: bool = False  # Django's mail call: only its delivery moves (codemods._mail)
    crossings: tuple[ArgumentCrossing, ...] = ()  # how each argument crosses (codemods._storable)
    held: str = ""  # an ``unknown`` job: why the gate holds it inline, and what decides it
    rekey: str = ""  # a moved site given its key (codemods._rewrites.rekey): why
    api: MigrationTarget = MigrationTarget.QUEUE_RUNTIME  # the API the rewrite writes

    @property
    def name(self) -> str:
        return self.job.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Block:
    """One block's statements, and how often each name occurs in the enclosing function.

    Transformers that remove a variable or introduce one (a thread object, a
    loop variable) must look at the whole function, not just the block: a
    name used after a ``with`` block is still used.
    """

    statements: Sequence[cst.BaseStatement]
    scope_names: Mapping[str, int]


@dataclass(frozen=True)
class Skip:
    reason: str
    status: Status = Status.SKIPPED  # MANUAL: allowed in principle, but a human must decide


@dataclass(frozen=True)
class Import:
    """``from module import name``; ``import module`` when ``name`` is None (``as alias``)."""

    module: str
    name: str | None = None
    alias: str | None = None  # ``import module as alias``, ``from module import name as alias``


@dataclass(frozen=True)
class Edit:
    """What one rewrite changes: statements in its block, and what the module must then do.

    ``replacements`` maps a statement index (in one block) to the statements
    replacing it (empty: removed). The whole-module edits a rewrite needs are
    declared, not done: the pass applies them once per file, through the one
    import API (``codemods._edits.imports``).
    """

    replacements: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    dropped_params: frozenset[str] = frozenset()  # parameters to drop if nothing else uses them
    adds: tuple[Import, ...] = ()  # imports the new code needs
    removes: tuple[Import, ...] = ()  # imports to drop when nothing uses them any more


@dataclass(frozen=True)
class Rewritten:
    """The target's site now enqueues."""

    target: Target

    def site_outcome(self) -> SiteOutcome:
        outcome = SiteOutcome(
            site=self.target.site, status=Status.REWRITTEN, crossings=list(self.target.crossings)
        )
        if self.target.delivery:
            return outcome.model_copy(update={"reason": DELIVERY_NOTE})
        note = outcome.arguments_note()
        notes = [
            self.target.rekey,
            self.target.held,
            f"arguments: {note}" if note else "",
            files_changed_note(self.target.job) or "",
        ]
        return outcome.model_copy(update={"reason": "; ".join(n for n in notes if n)})


@dataclass(frozen=True)
class Skipped:
    """The target's site was left as it is, for ``reason`` (``status``: skipped, manual, already)."""

    target: Target
    reason: str
    status: Status = Status.SKIPPED

    def site_outcome(self) -> SiteOutcome:
        lines = self.target.site.result_use_lines if self.status is Status.MANUAL else []
        return SiteOutcome(
            site=self.target.site, status=self.status, reason=self.reason, lines=lines
        )


@dataclass(frozen=True)
class Failed:
    """Rewriting the target's file raised ``error``: the file is left as it is."""

    target: Target
    error: str

    def site_outcome(self) -> SiteOutcome:
        reason = f"the rewrite failed, the file is left as it is: {self.error}"
        return SiteOutcome(site=self.target.site, status=Status.SKIPPED, reason=reason)


TargetOutcome = Rewritten | Skipped | Failed


def manual_reason(site: CallSite) -> str:
    """Which lines read the result, what an enqueue would change, and the two ways on."""
    lines = ", ".join(str(n) for n in site.result_use_lines)
    if lines:
        where = f"lines {lines} read it"
    elif site.result_kept_in:  # a handle or value stored where other code reads it
        where = f"it is kept in `{site.result_kept_in}`, which code outside this function can read"
    else:
        where = f"the statement at line {site.location.line} read it"
    return (
        f"the caller uses the result ({where}): an enqueue returns a job handle at once, "
        "not the job's outcome, so what those lines decide (a message, a redirect) would no "
        "longer reflect what the job did; either keep this site inline, or change what the "
        'user is told to "we will send ..." and rewrite it by hand'
    )
