"""In-process scheduler registrations read as the runtime's periodic declarations, exactly or not at all.

Three shapes, each of one job taking no arguments (a periodic job takes none):

* APScheduler ``sched.add_job(fn, "interval", minutes=5)`` / ``"cron"`` trigger;
* APScheduler ``@sched.scheduled_job("interval", ...)`` on the job itself;
* ``schedule.every(5).minutes.do(fn)``, ``schedule.every().day.at("10:30", "Europe/Berlin").do(fn)``.

Only exact translations: a jitter, a start or end date, a misfire rule other
than the runtime's (the latest missed tick runs once, older ones are skipped:
APScheduler's ``coalesce=True`` with no grace limit), a wall-clock time with
no zone (the scheduler would use the host's local zone, unknown here) or any
argument for the job is a reason, never a guess. The cron fields are checked
by the runtime's own parser, so what is written is what a worker accepts.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods._jobdefs import registered_def
from codemods._project import Project
from codemods._syntax import dotted, last_name
from codemods._types import SiteOutcome, Status, Target
from inventory.models import CallSite, Idempotency, Job, Pattern
from queue_runtime.errors import QueueError
from queue_runtime.periodic import Schedule

_SECONDS = {"weeks": 604_800, "days": 86_400, "hours": 3600, "minutes": 60, "seconds": 1}
_CRON_FIELDS = ("minute", "hour", "day", "month", "day_of_week")  # cron's five, in order
_SIGNIFICANCE = ("month", "day", "day_of_week", "hour", "minute")  # coarsest first
_MINIMUM = {"month": "1", "day": "1", "hour": "0", "minute": "0"}
_HARMLESS = frozenset({"id", "name", "replace_existing"})  # labels, not timing
_FIELD = re.compile(r"^[0-9*/,\-]+$")
_NAMED = re.compile(r"^(\*|[a-z]{3}(-[a-z]{3})?)(,[a-z]{3}(-[a-z]{3})?)*$")
_UNITS = {"second": "s", "minute": "m", "hour": "h", "day": "d"}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_AT_DAY = re.compile(r"^(\d{1,2}):(\d{2})(?::00)?$")
_AT_HOUR = re.compile(r"^:(\d{2})$")


@dataclass(frozen=True)
class Trigger:
    """A registration's schedule as ``@job(...)`` arguments: ``every="15m"`` or ``cron=...``."""

    every: str | None = None
    cron: str | None = None
    timezone: str | None = None

    def arguments(self) -> str:
        if self.every is not None:
            return f'every="{self.every}"'
        zone = f', timezone="{self.timezone}"' if self.timezone else ""
        return f'cron="{self.cron}"{zone}'


def plan(site: CallSite, job: Job, project: Project) -> Trigger | str:
    """The site's schedule, or why it cannot become a periodic declaration."""
    if job.idempotency is not Idempotency.IDEMPOTENT:
        return "only idempotent jobs become periodic declarations (a tick may run twice)"
    if site.result_used or site.arguments:
        return (
            "the registration passes arguments or keeps its job object: a periodic job takes none"
        )
    info = project.module_at(site.location.path)
    call = (
        None if info is None else registration_at(cst.parse_module(info.text), site.location.line)
    )
    if call is None:
        return "no scheduler registration at the recorded line: rescan"
    found = translate(call)
    if isinstance(found, Trigger) and _registered(job, project):
        return f"the job already has @job(...): add {found.arguments()} to it by hand"
    return found


def _registered(job: Job, project: Project) -> bool:
    """The job's definition already carries ``@job(...)``: apply would not decorate it again."""
    info = project.module_at(job.location.path) if job.location else None
    func = info.functions.get(job.qualname.rsplit(".", 1)[-1]) if info else None
    return func is not None and registered_def(func)


def one_schedule_per_job(
    targets: list[Target], outcomes: list[SiteOutcome]
) -> tuple[list[Target], list[SiteOutcome]]:
    """A job registered on schedulers more than once keeps every registration: one
    ``@job(every=...)`` cannot say two schedules (the other sites still move)."""
    scheduled = Counter(t.job.qualname for t in targets if t.schedule)
    twice = {q for q, n in scheduled.items() if n > 1}
    reason = "the job is registered on a scheduler more than once: a periodic job has one schedule"
    held = [t for t in targets if t.schedule and t.job.qualname in twice]
    skipped = [SiteOutcome(site=t.site, status=Status.SKIPPED, reason=reason) for t in held]
    return [t for t in targets if t not in held], [*outcomes, *skipped]


def registration_at(module: cst.Module, line: int) -> cst.Call | None:
    """The registration call (``add_job``, ``scheduled_job``, ``.do``) that starts on ``line``."""
    finder = _FindRegistration(line)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(finder)
    return finder.found


class _FindRegistration(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.found: cst.Call | None = None

    def visit_Call(self, node: cst.Call) -> None:
        here = self.get_metadata(PositionProvider, node).start.line == self.line
        if self.found is None and here and method(node) in ("add_job", "scheduled_job", "do"):
            self.found = node


def method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def job_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The function a statement registration runs (None for ``scheduled_job``)."""
    first = call.args[0] if call.args else None
    if first is None or (
        first.keyword is not None and first.keyword.value not in ("func", "job_func")
    ):
        return None
    return first.value


def translate(call: cst.Call) -> Trigger | str:
    """``call``'s trigger as a checked Trigger, or what makes it inexact."""
    name = method(call)
    found = _schedule_chain(call) if name == "do" else _apscheduler(call, name == "add_job")
    if isinstance(found, str):
        return found
    try:
        Schedule.of(found.every, found.cron, found.timezone)
    except QueueError as exc:
        return f"the runtime would not accept this schedule: {exc}"
    return found


# -- APScheduler -----------------------------------------------------------
def _apscheduler(call: cst.Call, with_func: bool) -> Trigger | str:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if len(positional) > (2 if with_func else 1) or any(a.star for a in call.args):
        return "positional or unpacked arguments after the trigger: not translated"
    trigger = (
        positional[-1].value if len(positional) > int(with_func) else keywords.pop("trigger", None)
    )
    keywords.pop("func", None)
    kind = _literal(trigger) if trigger is not None else None
    if kind not in ("interval", "cron"):
        return "only the 'interval' and 'cron' triggers, named as strings, are translated"
    problem = _misfire(keywords)
    if problem:
        return problem
    values = {k: v for k, v in keywords.items() if k not in _HARMLESS}
    return _interval(values) if kind == "interval" else _cron(values)


def _misfire(keywords: dict[str, cst.BaseExpression]) -> str | None:
    if "args" in keywords or "kwargs" in keywords:
        return "the registration passes args=/kwargs=: a periodic job takes no arguments"
    for inexact in ("jitter", "start_date", "end_date", "next_run_time", "max_instances"):
        if inexact in keywords:
            return f"{inexact}= has no exact equivalent in the runtime's periodic jobs"
    if "coalesce" in keywords and _literal(keywords.pop("coalesce")) is not True:
        return "coalesce=False runs every missed tick: the runtime runs only the latest"
    if (
        "misfire_grace_time" in keywords
        and _literal(keywords.pop("misfire_grace_time")) is not None
    ):
        return "misfire_grace_time= limits catch-up: the runtime always runs the latest missed tick"
    return None


def _interval(values: dict[str, cst.BaseExpression]) -> Trigger | str:
    values.pop("timezone", None)  # an interval's ticks do not depend on a zone
    unknown = set(values) - set(_SECONDS)
    if unknown:
        return f"interval argument(s) {', '.join(sorted(unknown))}: not translated"
    amounts = [_literal(v) for v in values.values()]
    if not values or not all(isinstance(a, int) and not isinstance(a, bool) for a in amounts):
        return "the interval is not given as whole literal numbers"
    seconds = sum(_SECONDS[k] * int(str(_literal(v))) for k, v in values.items())
    return Trigger(every=_compact(seconds))


def _cron(values: dict[str, cst.BaseExpression]) -> Trigger | str:
    zone = _literal(values.pop("timezone")) if "timezone" in values else None
    if not isinstance(zone, str):
        return (
            "a cron trigger without a literal timezone= runs in the scheduler's zone, unknown here"
        )
    if _literal(values.pop("second", cst.SimpleString('"0"'))) not in ("0", 0):
        return "a cron second other than 0: the runtime's cron has minute resolution"
    unknown = set(values) - set(_CRON_FIELDS)
    if unknown:
        return f"cron field(s) {', '.join(sorted(unknown))}: not translated"
    first = min((_SIGNIFICANCE.index(f) for f in values), default=len(_SIGNIFICANCE))
    fields = [_cron_field(f, values.get(f), _SIGNIFICANCE.index(f) > first) for f in _CRON_FIELDS]
    bad = next((f for f in fields if f.startswith("!")), None)
    return Trigger(cron=" ".join(fields), timezone=zone) if bad is None else bad[1:]


def _cron_field(name: str, value: cst.BaseExpression | None, finer: bool) -> str:
    """The field's cron text, or ``!reason``.

    APScheduler: an unset field finer than the first one given is its minimum
    (``hour=3`` means 03:00), except ``day_of_week``; coarser ones are ``*``.
    """
    if value is None:
        return _MINIMUM.get(name, "*") if finer else "*"
    text = str(_literal(value)).lower()
    if name == "day_of_week":
        ok = _NAMED.fullmatch(text) is not None
        why = "day_of_week as names (APScheduler numbers weekdays from Monday, cron from Sunday)"
        return text.upper() if ok else f"!{why}"
    return text if _FIELD.fullmatch(text) else f"!cron {name}={text!r}: not a plain cron field"


# -- schedule --------------------------------------------------------------
def _schedule_chain(do: cst.Call) -> Trigger | str:
    """``every(N).unit[.at(...)].do(fn)``: anything else in the chain is a reason."""
    if len(do.args) != 1:
        return "the registration passes arguments to the job: a periodic job takes none"
    links = _links(do.func)
    if links is None:
        return "not a plain every(...).unit[.at(...)].do(fn) chain"
    count, unit, at = links
    if at is None:
        if unit.rstrip("s") not in _UNITS:
            return f"every().{unit} without at(): it starts from the registration time"
        return Trigger(every=f"{count}{_UNITS[unit.rstrip('s')]}")
    return _at(count, unit, at)


def _links(func: cst.BaseExpression) -> tuple[int, str, cst.Call | None] | None:
    if not isinstance(func, cst.Attribute) or func.attr.value != "do":
        return None
    head = func.value
    at: cst.Call | None = None
    if isinstance(head, cst.Call) and method(head) == "at":
        at = head
        head = cst.ensure_type(head.func, cst.Attribute).value
    if not isinstance(head, cst.Attribute) or not isinstance(head.value, cst.Call):
        return None
    every = head.value
    if dotted(every.func) not in ("schedule.every", "every") or len(every.args) > 1:
        return None
    count = _literal(every.args[0].value) if every.args else 1
    return (count, head.attr.value, at) if isinstance(count, int) and count > 0 else None


def _at(count: int, unit: str, at: cst.Call) -> Trigger | str:
    values = [_literal(a.value) for a in at.args]
    if not values or len(values) > 2 or not all(isinstance(v, str) for v in values):
        return "at() without a literal time"
    if len(values) == 1:
        return "at() without a timezone runs in the host's local zone, unknown here"
    time, zone = str(values[0]), str(values[1])
    if count != 1:
        return f"every({count}).{unit}.at(): a multi-unit interval at a time has no cron form"
    day = _AT_DAY.fullmatch(time)
    if unit in ("day", *_WEEKDAYS) and day:
        weekday = "*" if unit == "day" else unit[:3].upper()
        return Trigger(cron=f"{int(day[2])} {int(day[1])} * * {weekday}", timezone=zone)
    hour = _AT_HOUR.fullmatch(time)
    if unit == "hour" and hour:
        return Trigger(cron=f"{int(hour[1])} * * * *", timezone=zone)
    return f"every().{unit}.at({time!r}): not translated (seconds, or another unit)"


# -- helpers ---------------------------------------------------------------
def _literal(expr: cst.BaseExpression) -> object:
    """A literal's value (str, int, True/False/None); a sentinel for anything else."""
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    if isinstance(expr, cst.Integer):
        return int(expr.value.replace("_", ""), 0)
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    return _NOT_LITERAL


_NOT_LITERAL = object()


def _compact(seconds: int) -> str:
    """``900`` -> ``"15m"``, ``5400`` -> ``"1h30m"``: the runtime's interval text."""
    parts = []
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts)


# -- Signal receivers that are the job, registered with signal.connect(job, ...) ------

_RECEIVER_KEYWORD = "receiver"


READS_SIGNAL = (
    "the receiver is itself the job and reads the `signal` Django passes it (a live Signal "
    "object, never storable): stop reading `signal` in it, and apply again"
)
SHAPE = (
    "the receiver is itself the job, and is {what}: make it a plain `def` taking "
    "`sender, instance, **kwargs` (or named keyword parameters), and apply again"
)
READS_ORIGIN = (
    "the receiver is itself the job, handles post_delete and reads the `origin` Django passes "
    "it (the instance or queryset delete() was called on, gone too when a worker runs): stop "
    "reading `origin` in it, and apply again"
)
RETURNS = (
    "the receiver is itself the job and returns a value: `signal.send()` hands it to the "
    "sender (a plugin registry, a veto), and an enqueue returns nothing; keep it in-process, "
    "or, if no sender reads it, stop returning it, and apply again"
)
SIGNAL = "signal"
# Signals sent about a row that is gone once the transaction commits.
_DELETE_SIGNALS = frozenset({"pre_delete", "post_delete"})


def delete_signal(node: cst.CSTNode) -> str | None:
    names = [n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name)]
    return next((n for n in names if n in _DELETE_SIGNALS or n.startswith("pre_")), None)


def connected_problem(func: cst.FunctionDef) -> str | None:
    """Why a connected receiver that is the job cannot be enqueued by keyword; None if it can."""
    params = func.params
    if func.asynchronous is not None:
        return SHAPE.format(what="a coroutine")
    # ``Signal.send`` passes only keywords (``receiver(signal=self, sender=sender, **named)``),
    # so ``*args`` is always empty: harmless; positional-only parameters could never be filled.
    if params.posonly_params:
        return SHAPE.format(what="given positional-only parameters")
    if _reads_signal(func):
        return READS_SIGNAL
    if reads(func, ORIGIN):
        return READS_ORIGIN
    return RETURNS if _returns_value(func) else None


def _reads_signal(func: cst.FunctionDef) -> bool:
    """The body uses a name ``signal`` or the string ``"signal"`` (``kwargs["signal"]``)."""
    return reads(func, SIGNAL)


def reads(func: cst.FunctionDef, name: str) -> bool:
    """The body uses the name ``name`` or the string of it (``kwargs["origin"]``)."""
    names = m.findall(func.body, m.Name(name))
    literal = m.SimpleString(value=m.MatchIfTrue(lambda value: _unquoted(value) == name))
    return bool(names or m.findall(func.body, literal))


def _unquoted(value: str) -> str:
    return value.strip("\"'")


def _returns_value(func: cst.FunctionDef) -> bool:
    """A ``return <value>`` or a ``yield`` in the receiver's own body (not in a nested def)."""
    return _gives_value(func.body)


def _gives_value(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.FunctionDef | cst.Lambda | cst.ClassDef):
        return False
    if isinstance(node, cst.Yield):
        return True
    if isinstance(node, cst.Return) and node.value is not None:
        return not (isinstance(node.value, cst.Name) and node.value.value == "None")
    return any(_gives_value(child) for child in node.children)


ORIGIN = "origin"
POST_DELETE = "post_delete"


PLACES = (
    "the receiver is itself the job, and {count} registrations of it were found ({places}), "
    "{why}: every one is rewritten or none, as a registration left in place would run the job "
    "in-process too; {fix}, and apply again"
)


DISCONNECTED = (
    "the receiver is itself the job, and {places} {verb} it by name (`{call}`): apply "
    "registers a new function that enqueues the job, so that call would no longer find the "
    "registration and the job would go on running where it is meant to be switched off; give "
    "the registration a `dispatch_uid` and disconnect by it (`signal.disconnect(sender=..., "
    "dispatch_uid=...)`), then apply again"
)


def disconnected(job: Job, project: Project) -> str | None:
    """Why a receiver that is the job cannot be registered under a new function: some module
    (tests included) disconnects it by the function itself (``post_delete.disconnect(f,
    sender=M)``, Django's and blinker's lookup by identity); None when none does. A
    disconnect by ``dispatch_uid`` finds the moved registration (its decorator keeps it)."""
    name = job.qualname.rpartition(".")[2]
    entries = [entry.split("\t", 2) for entry in _disconnect_calls(project)]
    found = [(place, call) for named, place, call in entries if named == name]
    if not found:
        return None
    places = ", ".join(place for place, _ in found)
    call = found[0][1] if len(found[0][1]) <= 80 else found[0][1][:77] + "..."
    return DISCONNECTED.format(places=places, verb=_verb(len(found)), call=call)


_DISCONNECTS = "disconnect calls"


def _disconnect_calls(project: Project) -> list[str]:
    """Every ``x.disconnect(f, ...)`` of the project by a function, without a dispatch_uid,
    as ``name<TAB>path:line<TAB>call on one line``; read once per apply (``Project.facts``),
    however many receivers ask."""
    if _DISCONNECTS not in project.facts:
        found: list[str] = []
        for path, text in sorted(project.texts_containing("disconnect(").items()):
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                name = _disconnected(node) if isinstance(node, ast.Call) else None
                if name and isinstance(node, ast.Call):
                    call = " ".join((ast.get_source_segment(text, node) or "").split())
                    found.append(f"{name}\t{path}:{node.lineno}\t{call}")
        project.facts[_DISCONNECTS] = found
    return project.facts[_DISCONNECTS]


def _verb(count: int) -> str:
    return "disconnects" if count == 1 else "disconnect"


def _disconnected(call: ast.Call) -> str | None:
    """The function ``x.disconnect(name, ...)`` / ``x.disconnect(receiver=mod.name)`` names,
    without a dispatch_uid; None for any other call."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "disconnect":
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    if "dispatch_uid" in keywords:
        return None  # Django looks the registration up by the uid alone
    given = call.args[0] if call.args else keywords.get("receiver")
    if isinstance(given, ast.Name):
        return given.id
    return given.attr if isinstance(given, ast.Attribute) else None


def all_or_none(site: CallSite, sites: list[CallSite], job: Job, project: Project) -> str | None:
    """Why ``site``, a connect call registering the job itself, cannot move; None when it and
    every other registration of the job (``sites``: all the job's sites) can."""
    receivers = [s for s in sites if s.pattern is Pattern.SIGNAL_RECEIVER]
    kinds = {s.location: _registration(s, job, project) for s in receivers}
    if kinds.get(site.location) not in (_CONNECT, _HELD, _BY_VALUE):
        return None  # not a connect call of the job itself: the other rewrites decide
    held = [s for s in receivers if kinds[s.location] in (_NOT_CONNECT, _HELD)]
    if held and len(receivers) > 1:
        places = ", ".join(f"{s.location.path}:{s.location.line}" for s in receivers)
        why = _why(kinds[held[0].location] or _NOT_CONNECT, held[0])
        return PLACES.format(count=len(receivers), places=places, why=why, fix=_FIX)
    problem = _definition_problem(job, project)
    # A post_delete connect gets a receiver of its own that snapshots the instance, beside the
    # one the post_save connects share; if the job changes the instance, neither moves.
    if problem is None and any(kinds[s.location] == _BY_VALUE for s in receivers):
        return changes_instance(job)
    return problem


_NOT_CONNECT = "not a connect call"
_HELD = "held"
_CONNECT = "connect"
_BY_VALUE = "connect of post_delete"  # its own receiver snapshots the instance
_FIX = "make every registration a `signal.connect(<job>, ...)` of post_* signals"


def _why(kind: str, at: CallSite) -> str:
    where = f"{at.location.path}:{at.location.line}"
    if kind == _HELD:
        return f"and the one at {where} is of a signal whose receiver stays in-process"
    return f"and the one at {where} is not a `connect(<job>, ...)` call this rewrite can change"


def _registration(site: CallSite, job: Job, project: Project) -> str | None:
    """How ``site`` registers the job: a connect call (held: of a ``pre_*`` signal), something
    else; None when the site is no registration of the job itself (a call inside a receiver)."""
    info = project.module_at(site.location.path)
    name = job.qualname.rpartition(".")[2]
    call = None if info is None else _connect_named(info.text, site.location.line, name)
    if call is not None:
        held = delete_signal(call.func)
        if held == POST_DELETE:
            return _BY_VALUE
        return _HELD if held else _CONNECT
    if site.enclosing_function == job.qualname or site.enclosing_function is None:
        return _NOT_CONNECT  # the decorator form, a connect in a loop, a factory
    return None


def _connect_named(source: str, line: int, name: str) -> cst.Call | None:
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    for node, pos in wrapper.resolve(PositionProvider).items():
        if isinstance(node, cst.Call) and pos.start.line == line and _names_handler(node, name):
            return node
    return None


def _names_handler(call: cst.Call, name: str) -> bool:
    if last_name(call.func) != "connect":
        return False
    positional = [a for a in call.args if a.keyword is None and not a.star]
    named = [a for a in call.args if a.keyword is not None and a.keyword.value == _RECEIVER_KEYWORD]
    found = (positional or named)[:1]
    return bool(found) and last_name(found[0].value) == name


def _job_def(job: Job, project: Project) -> cst.FunctionDef | None:
    """The job's module-level ``def``, if it is one."""
    info = None if job.location is None else project.module_at(job.location.path)
    name = job.qualname.rpartition(".")[2]
    module = None if info is None else cst.parse_module(info.text)
    return next(
        (
            n
            for n in (module.body if module else [])
            if isinstance(n, cst.FunctionDef) and n.name.value == name
        ),
        None,
    )


def _definition_problem(job: Job, project: Project) -> str | None:
    """The job's own definition cannot be called by the new receiver (by keyword, no value)."""
    if job.location is None:
        return None
    func = _job_def(job, project)
    if func is None:
        return "the receiver is itself the job, and is not a module-level function: " + _FIXDEF
    if func.decorators:
        return "the receiver is itself the job, and is decorated as well as connected: " + _FIXDEF
    return connected_problem(func)


_FIXDEF = "make it a plain module-level `def` taking `sender, **kwargs`, and apply again"


CHANGES_INSTANCE = (
    "the receiver is itself the job, handles post_delete and changes the instance it is given "
    "(`{what}`{where}): a worker would change a copy of the deleted row, not the object the "
    "caller holds (which the caller may read after delete()); read the values it needs into "
    "locals and change nothing of `instance` (e.g. `default_storage.delete(instance.file.name)`), "
    "or keep it in-process"
)
MAY_CHANGE_INSTANCE = (
    "the receiver is itself the job, handles post_delete and calls `{what}`{where} on the "
    "instance it is given, which the scan could not follow: it may change the instance, and a "
    "worker would change a copy of the deleted row, not the object the caller holds; {fix}, "
    "or keep it in-process"
)
_SAY_PURE = (
    "if it only reads the instance, say so in pyproject.toml ([[tool.migrator.catalogue.pure]] "
    "{entry}) and scan again"
)
_REVIEW = (
    "what it does is decided at run time or reached through a guessed call, which only a "
    "reviewer can settle (keep the instance's values in locals and call nothing on it to move it)"
)
UNSAID = (
    "the receiver is itself the job and handles post_delete, and the inventory does not say "
    "whether it changes the instance it is given: run `migrator scan` again"
)
INSTANCE_NAME = "instance"


def changes_instance(job: Job) -> str | None:
    """Why a post_delete receiver that is the job cannot take the instance by value (a copy):
    the scan's ``Job.changes`` says it changes it, or calls on it something the scan could
    not follow; None when it only reads it."""
    if job.changes is None:
        return UNSAID
    change = next((c for c in job.changes if c.parameter == INSTANCE_NAME), None)
    if change is None:
        return None
    gap = change.unexplained
    if gap is None:
        return CHANGES_INSTANCE.format(what=change.change, where=change.where)
    fix = _SAY_PURE.format(entry=gap.toml()) if gap.entry else _REVIEW
    return MAY_CHANGE_INSTANCE.format(what=change.change, where=change.where, fix=fix)
