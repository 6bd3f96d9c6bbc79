"""The shared vocabulary: the Inventory contract between scan, plan and apply.

Every other part of the product reads these models and never re-detects.
The JSON form of :class:`Inventory` is versioned by ``schema_version``;
a change that removes or renames a field bumps the major number.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# 1.1: Job.fast_track, declared_key, keyless_idempotency; 1.2: Pattern.ENQUEUE (moved sites);
# 1.3: Job.unexplained (the calls an `unknown` verdict rests on, and the entry explaining each);
# 1.4: EffectKind.SOCKET_EMIT; 1.5: CallSite.result_kept_in, EffectKind.REQUEST_HOOK;
# 1.6: CallSite.surroundings, Inventory.atomic_requests (what apply reads, once in codemods)
# 1.7: Job.changes; 1.8: CallSite.run_inside (a job the framework runs inside the call written)
# 1.9: EffectKind.PROCESS_STATE (state of this process a worker would change its own copy of)
# 1.10: Job.task_of (a broker's task: a site running it in the caller does so on purpose)
# 1.11: Job.rebound_at (the module binds the job's name again after its definition)
# 1.12: Job.endless_loop (the loop that keeps the job running until its process stops),
# EffectKind.REQUEST_READ (a read of the request being served through a context proxy)
SCHEMA_VERSION = "1.12"
# The oldest Inventory ``migrator apply`` acts on: an older one lacks facts its rules read
# (a missing fact would read as "nothing around the call"), so apply scans again instead.
APPLY_SCHEMA = (1, 12)


class Pattern(StrEnum):
    """How the application hands work to something in its own process."""

    DIRECT_CALL = "direct_call"  # slow work called inline in a request handler
    THREAD = "thread"  # threading.Thread(target=...).start(), Thread subclasses
    EXECUTOR_SUBMIT = "executor_submit"  # ThreadPool/ProcessPool .submit / .map
    PROCESS = "process"  # multiprocessing.Process, Pool.apply_async / map_async
    ASYNCIO_TASK = "asyncio_task"  # asyncio.create_task / ensure_future / TaskGroup
    RUN_IN_EXECUTOR = "run_in_executor"  # loop.run_in_executor, asyncio.to_thread
    BACKGROUND_TASKS = "background_tasks"  # Starlette/FastAPI BackgroundTasks.add_task
    ON_COMMIT = "on_commit"  # django.db.transaction.on_commit
    SIGNAL_RECEIVER = "signal_receiver"  # django @receiver / signal.connect
    SCHEDULER = "scheduler"  # APScheduler add_job / scheduled_job, schedule.every().do
    ENQUEUE = "enqueue"  # already moved: fn.enqueue(...) of a queue_runtime @job


class Framework(StrEnum):
    FASTAPI = "fastapi"
    STARLETTE = "starlette"
    FLASK = "flask"
    DJANGO = "django"
    # Each named from its documented registration API (``_extract.detectors._handlers``).
    QUART = "quart"
    SANIC = "sanic"
    LITESTAR = "litestar"
    AIOHTTP = "aiohttp"
    BOTTLE = "bottle"
    FALCON = "falcon"
    TORNADO = "tornado"
    PYRAMID = "pyramid"


class Idempotency(StrEnum):
    """Verdicts, from safest to most dangerous (``unknown`` sorts last)."""

    IDEMPOTENT = "idempotent"
    NEEDS_KEY = "needs_key"
    NON_IDEMPOTENT = "non_idempotent"
    UNSAFE = "unsafe"
    UNKNOWN = "unknown"

    @property
    def severity(self) -> int:
        """Rank used by ``--fail-on``: a verdict fails CI at or above the threshold."""
        return _SEVERITY[self]


_SEVERITY = {
    Idempotency.IDEMPOTENT: 0,
    Idempotency.NEEDS_KEY: 2,
    Idempotency.NON_IDEMPOTENT: 3,
    Idempotency.UNSAFE: 4,
    Idempotency.UNKNOWN: 1,
}


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class EffectKind(StrEnum):
    """What a piece of code does to the world. Catalogue entries name one of these."""

    DB_READ = "db_read"
    DB_INSERT = "db_insert"
    DB_UPSERT = "db_upsert"
    DB_OVERWRITE = "db_overwrite"  # UPDATE ... SET col = value, save() of computed fields
    DB_INCREMENT = "db_increment"  # UPDATE ... SET n = n + 1, F('n') + 1, obj.n += 1; save()
    DB_DELETE = "db_delete"
    FILE_WRITE = "file_write"  # overwrite a path (mode "w"/"wb", write_text, PIL save)
    FILE_APPEND = "file_append"
    FILE_DELETE = "file_delete"  # remove a path (os.remove, Path.unlink, shutil.rmtree)
    HTTP_GET = "http_get"
    HTTP_PUT = "http_put"
    HTTP_DELETE = "http_delete"
    HTTP_POST = "http_post"
    HTTP_PATCH = "http_patch"
    EMAIL_SEND = "email_send"
    SMS_SEND = "sms_send"
    PUSH_SEND = "push_send"
    PAYMENT = "payment"  # moves money: charge, capture, refund, transfer, payout
    ACCOUNT_STATE = "account_state"  # balances, stock, credits, account status
    MESSAGE_PUBLISH = "message_publish"  # SQS/SNS/Kafka/pubsub sends
    SOCKET_EMIT = "socket_emit"  # Socket.IO / websocket messages to connected clients
    REQUEST_HOOK = "request_hook"  # acts on the request being served: after_this_request, flash
    REQUEST_READ = "request_read"  # reads the request being served: request.args, current_user
    PROCESS_STATE = "process_state"  # changes a module-level container or global of this process
    ENQUEUE = "enqueue"  # hands further work to a queue (celery delay, ...)
    CACHE_SET = "cache_set"
    CACHE_INCR = "cache_incr"  # INCR / LPUSH / XADD / RPUSH: grows on repeat
    CACHE_DELETE = "cache_delete"
    METRIC_INCR = "metric_incr"  # a metrics counter +1 / histogram observation: counts a repeat
    OBJECT_PUT = "object_put"  # S3/GCS put to a key
    RANDOM_ID = "random_id"  # uuid4 / random / time-based ids
    IMAGE_PROCESS = "image_process"
    REPORT_GENERATE = "report_generate"  # CSV / PDF / spreadsheet building
    SUBPROCESS = "subprocess"
    SLEEP = "sleep"
    DYNAMIC_CALL = "dynamic_call"  # target only known at run time


class Location(BaseModel):
    """A place in the scanned tree; ``path`` is POSIX and relative to the scan root."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None


class Effect(BaseModel):
    kind: EffectKind
    location: Location
    api: str = Field(
        description="The call or statement that has the effect, e.g. 'stripe.Refund.create'."
    )
    chain: list[str] = Field(
        default_factory=list,
        description="Qualified names from the job down to the function that has the effect.",
    )
    keyed: bool = Field(
        default=False,
        description="True when the call carries a stable idempotency key derived from the job's inputs.",
    )
    detail: str = ""


class Evidence(BaseModel):
    """One line of reasoning a reviewer can check at ``location``."""

    message: str
    location: Location | None = None
    chain: list[str] = Field(default_factory=list)


class Argument(BaseModel):
    """One argument passed to the job at a call site."""

    name: str = Field(description="Parameter name, or '#0', '#1'... for positional arguments.")
    source: str = Field(description="The argument expression as written.")
    serialisable: bool | None = Field(
        description="True if it can be stored as JSON, False if not, None if unknown."
    )
    reason: str = ""
    type: str = Field(
        default="",
        description="The argument's class when the scan knows it (a constructor, an "
        "annotation, a row a query loaded, the enclosing object), '' otherwise.",
    )


class Surroundings(BaseModel):
    """What encloses the call in its function: what a caller would lose if the call stopped
    running (and raising) here. Read by ``migrator apply``."""

    caught_at: list[int] = Field(
        default_factory=list,
        description="Lines of the `except` clauses of the `try` blocks around the call (one "
        "that only re-raises, or only logs or passes in a `try` without `else`, handles nothing "
        "and is left out).",
    )
    atomic_at: list[int] = Field(
        default_factory=list,
        description="Lines of the `transaction.atomic` blocks (`with`) or decorators the call "
        "runs inside, in its function or a function enclosing it.",
    )
    non_atomic_requests: bool = Field(
        default=False,
        description="Its function is decorated `@transaction.non_atomic_requests`: Django's "
        "ATOMIC_REQUESTS does not wrap it.",
    )


# A task framework's call that runs the task's function in the caller, with no broker (each
# framework's documentation): Celery's ``Task.apply`` ("execute this task locally, by
# blocking until the task returns") and ``Task.run`` (the task's body), Huey's
# ``call_local``, Dramatiq's ``actor.fn``. Method -> the framework (``Job.task_of``).
TASK_RUNS_HERE: dict[str, str] = {
    "apply": "celery",
    "run": "celery",
    "call_local": "huey",
    "fn": "dramatiq",
}


# ``CallSite.unresolved_reason`` of a direct call through a table of functions
# (``ENGINES[name](x)``): the site's job is one value of the table, which the call does not
# name, so ``migrator apply`` cannot enqueue it there.
DISPATCHED = "called through "


class CallSite(BaseModel):
    location: Location
    pattern: Pattern
    job: str = Field(description="Qualified name of the job function, or 'unknown'.")
    target_source: str = Field(default="", description="How the target is written at the site.")
    run_inside: str = Field(
        default="",
        description="A call written here that the framework runs the job inside, when it is "
        "not the job's own call (`Skill.objects.create`: Django's create calls the model's "
        "`save()`, the job); '' for a call of the job itself.",
    )
    unresolved_reason: str = ""
    enclosing_function: str | None = None
    handler: Framework | None = Field(
        default=None, description="The web framework whose request handler encloses the site."
    )
    result_used: bool = False
    result_use_lines: list[int] = Field(default_factory=list)
    result_kept_in: str | None = Field(
        default=None,
        description="Where the caller keeps the result (a task, thread or timer handle, or a "
        "value) so that code outside the function can read it: `self._task`, a `global`.",
    )
    arguments: list[Argument] = Field(default_factory=list)
    surroundings: Surroundings = Field(default_factory=lambda: Surroundings())
    idempotency: Idempotency = Idempotency.UNKNOWN
    fingerprint: str = Field(
        default="", description="Stable across line moves; used by baselines and SARIF."
    )
    baselined: bool = Field(
        default=False,
        description="Set by `migrator scan --baseline`: the finding is accepted and does not fail CI.",
    )


class UnexplainedCall(BaseModel):
    """A call a job reaches that the scan could not follow, and how a user explains it."""

    call: str = Field(description="The call as the job's evidence names it.")
    entry: str | None = Field(
        default=None,
        description="The `call` of a [tool.migrator.catalogue] entry ([[pure]] or [[effect]]) "
        "that explains it (`?.method` for a receiver of unknown type); None when only a pinned "
        "verdict decides it (a guessed dispatch, a value known at run time).",
    )
    receiver: str | None = Field(
        default=None,
        description="For a `?.method` entry: the `receiver` regex that keeps the entry to this "
        "receiver as written (`^instance\\.file$`), so it explains no other object's method.",
    )

    def toml(self) -> str:
        """The entry's keys as one TOML line (``call = "?.delete", receiver = '^x\\.file$'``)."""
        keys = f'call = "{self.entry}"'
        return keys + (f", receiver = '{self.receiver}'" if self.receiver else "")


class ParameterChange(BaseModel):
    """A job changes, in memory, an object it is given (or calls something on it the scan
    could not follow): a worker would change its copy, not the caller's object."""

    parameter: str
    change: str = Field(
        description="The statement or call as written: `self.name = None`, or the call on the "
        "parameter with what it changes (`instance.file.delete(save=False), which changes it: "
        "...`)."
    )
    location: Location | None = None
    chain: list[str] = Field(
        default_factory=list, description="Job -> the function that changes it."
    )
    unexplained: UnexplainedCall | None = Field(
        default=None,
        description="Set when the change is a call on the parameter the scan could not follow "
        "(which may change it): the call, and the catalogue entry that would explain it.",
    )

    @property
    def followed(self) -> bool:
        """The scan read what changes the parameter (not a call it could not follow)."""
        return self.unexplained is None

    @property
    def where(self) -> str:
        """``, path:line`` when the change is in a function the job calls (the chain is
        longer than the job itself), else nothing: the job's own line is the site's."""
        at = self.location
        return f", {at.path}:{at.line}" if at is not None and len(self.chain) > 1 else ""


class Job(BaseModel):
    qualname: str
    location: Location | None = None
    idempotency: Idempotency
    confidence: Confidence
    effects: list[Effect] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    suggested_key: str | None = None
    pinned: bool = Field(
        default=False, description="Verdict pinned in [tool.migrator] configuration."
    )
    is_async: bool = False
    parameters: list[str] = Field(default_factory=list)
    fast_track: bool = Field(
        default=False,
        description="Notification fast track: the only effects a retry repeats are notifications "
        "(email, SMS, push), no money or account state; `migrator plan` puts it in phase 2.",
    )
    declared_key: str | None = Field(
        default=None,
        description='The idempotency key declared in [tool.migrator.jobs."<job>"]: a template of '
        "its parameters ('welcome:{user_id}') or a key function ('pkg.module:function').",
    )
    keyless_idempotency: Idempotency | None = Field(
        default=None,
        description="The verdict its effects give without the declared key, when the key changed "
        "it (e.g. non_idempotent): `migrator apply` moves such a job only when named with --job.",
    )
    unexplained: list[UnexplainedCall] = Field(
        default_factory=list,
        description="Calls the verdict could not explain (no source read and no catalogue entry, "
        "or reached only by a guess): a [tool.migrator.catalogue] entry for each, or a pinned "
        "verdict, is what an `unknown` job needs to be decided.",
    )
    django_task: bool = Field(
        default=False,
        description="The job is a Django task (`@task` of `django.tasks` or the `django_tasks` "
        "backport): its `.enqueue()` runs it where settings.TASKS sends it (in the caller under "
        "the default ImmediateBackend).",
    )
    rebound_at: list[int] = Field(
        default_factory=list,
        description="Lines of the other statements of its module (or class body) that bind "
        "the job's name once it is defined (`send = logged(send)`, another `def send` in "
        "another branch, an import of it): the name callers use is not (always) that "
        "definition, so a decorator on it would not be what they call.",
    )
    endless_loop: Location | None = Field(
        default=None,
        description="The loop that keeps the job running until its process stops (an unbroken "
        "`while True`, a loop on a stop flag), in the job or a function it calls: a worker "
        "could never finish it, so `migrator apply` never enqueues it.",
    )
    task_of: str = Field(
        default="",
        description="The broker whose task the job is (`celery`, `huey`, `dramatiq`, or `a task "
        "queue` when the decorator could be either of two), from its decorators, else empty: such a job already has a queue, and a site that runs it in the "
        "caller (`.apply`, `.run`, `.call_local`, `.fn`, or a Celery task or Dramatiq actor called "
        "as a function) runs it there; a Huey task called as a function is Huey's enqueue.",
    )
    changes: list[ParameterChange] | None = Field(
        default=None,
        description="The parameters the job changes in memory (or calls something on the scan "
        "could not follow), one entry each; [] when it only reads them; None when the scan "
        "did not say (an inventory written by hand or by an older scan).",
    )

    def files_changed_here(self) -> list[Effect]:
        """The job's writes and deletions of files where it runs (``open(path, "w")``,
        ``Path.write_bytes``, PIL's ``save``, ``shutil.move``, ``os.remove``,
        ``shutil.rmtree``): moved, they happen on the worker's machine. A Django storage's
        ``save`` or ``delete`` goes through the configured backend and is not one of them."""
        return [
            e
            for e in self.effects
            if e.kind in _LOCAL_FILES
            and "storage" not in e.api.lower()
            and "FieldFile" not in e.api
        ]


_LOCAL_FILES = frozenset({EffectKind.FILE_WRITE, EffectKind.FILE_APPEND, EffectKind.FILE_DELETE})
_FILES_SHOWN = 3


def files_verb(effects: list[Effect]) -> str:
    """``writes``, ``deletes`` or ``writes and deletes``: what the job does to local files."""
    deletes = any(e.kind is EffectKind.FILE_DELETE for e in effects)
    writes = any(e.kind is not EffectKind.FILE_DELETE for e in effects)
    return "writes and deletes" if writes and deletes else "deletes" if deletes else "writes"


def files_changed_note(job: Job) -> str | None:
    """What ``migrator plan`` and ``migrator apply`` say of a moving job that writes or
    deletes files where it runs: which calls, and that a worker does it on its own machine."""
    changed = job.files_changed_here()
    if not changed:
        return None
    shown = ", ".join(
        f"`{e.api}` at {e.location.path}:{e.location.line}" if e.location else f"`{e.api}`"
        for e in changed[:_FILES_SHOWN]
    )
    more = f" and {len(changed) - _FILES_SHOWN} more" if len(changed) > _FILES_SHOWN else ""
    verb = files_verb(changed)
    if verb == "writes":
        after = (
            "a worker writes them on its own machine, so it must see the files the app reads "
            "(a shared volume or the app's hosts), or they land where the app never looks"
        )
    else:
        done = "deletes" if verb == "deletes" else "changes"
        after = (
            f"a worker {done} them on its own machine, so it must see the app's files (a "
            "shared volume or the app's hosts), or the app's own copies stay as they were"
        )
    return f"{verb} files where it runs ({shown}{more}): {after}"


class ScanErrorKind(StrEnum):
    """Why a file was not summarised."""

    SYNTAX = "syntax"
    ENCODING = "encoding"
    TOO_LARGE = "too_large"
    GENERATED = "generated"
    SYMLINK_LOOP = "symlink_loop"
    IO = "io"
    INTERNAL = "internal"


class ScanError(BaseModel):
    path: str
    reason: str
    kind: ScanErrorKind = Field(
        description="syntax | encoding | too_large | generated | symlink_loop | io | internal"
    )


class ScanStats(BaseModel):
    files_scanned: int = 0
    files_cached: int = 0
    files_skipped: int = 0
    lines: int = 0
    functions: int = 0
    seconds: float = 0.0


class Inventory(BaseModel):
    schema_version: str = SCHEMA_VERSION
    tool_version: str = ""
    root: str = Field(description="Absolute path of the scanned root.")
    sites: list[CallSite] = Field(default_factory=list)
    jobs: list[Job] = Field(default_factory=list)
    errors: list[ScanError] = Field(default_factory=list)
    stats: ScanStats = Field(default_factory=ScanStats)
    file_hashes: dict[str, str] = Field(
        default_factory=dict,
        description="POSIX path (relative to root) -> sha256 hex of the bytes scanned; "
        "apply uses it to refuse or rescan files changed since the scan.",
    )
    atomic_requests: list[str] = Field(
        default_factory=list,
        description="'path:line' of each settings entry turning Django's ATOMIC_REQUESTS on "
        "(a value that is not a literal False counts as on): every view then runs in "
        "transaction.atomic.",
    )

    def older_than(self, version: tuple[int, int]) -> bool:
        """Written by a migrator whose schema is older than ``version`` (or unreadable)."""
        major, _, minor = self.schema_version.partition(".")
        if not (major.isdigit() and minor.isdigit()):
            return True
        return (int(major), int(minor)) < version

    def job(self, qualname: str) -> Job | None:
        return next((j for j in self.jobs if j.qualname == qualname), None)

    def sites_of(self, qualname: str) -> list[CallSite]:
        return [s for s in self.sites if s.job == qualname]
