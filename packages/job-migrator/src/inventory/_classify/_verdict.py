"""Idempotency verdicts: the rules, in the order they are tried.

1. pinned in ``[tool.migrator.jobs]`` -> that verdict, the reason as evidence.
2. ``unsafe``: a payment / account-state effect without a key derived from
   the job's inputs (money may move twice). Wins over everything else.
3. ``needs_key``: the user declared an idempotency key for the job.
4. ``non_idempotent``: an effect that repeats on retry (insert, increment,
   append, send, POST, publish, enqueue, stored random id; a metric count only when
   counting is all the job does, else it is instrumentation) with neither a
   derived key nor a natural key. Wins over ``unknown``: what is known to
   repeat is the lower bound, an opaque call can only make it worse (it is
   kept as evidence, and lowers the confidence).
5. ``unknown``: dynamic calls (or subprocesses) in the reachable code, unless
   a dedup guard covers them (then rule 6 decides: a repeat never reaches them).
6. ``needs_key``: every payment, and every repeat-on-retry effect, is keyed
   by a key derived from the inputs: safe only with that key; or the only
   repeats are inserts carrying an id-like column from the inputs (a natural
   key to deduplicate on); or every repeat sits behind a dedup guard (a
   ``cache.add`` claim, ``get_or_create``, a check-then-create), which can
   expire or race.
7. ``unknown`` (the **soundness rule**): a call the scan could not resolve
   is reached (a project name defined nowhere, a method of a receiver of
   unknown type, a library call whose source was not read and that no
   ``[[effect]]`` or ``[[pure]]`` catalogue entry explains): finding no effect
   behind a gap is no evidence of a no-op, so ``idempotent``, the verdict
   ``migrator apply`` acts on without asking, is never given on a gap.
8. ``idempotent``: every reached call explained, and only reads, overwrites,
   upserts, deletes, GET/PUT/DELETE, cache set/delete, derived writes, or no
   effect at all.

The **notification fast track**: a job whose only effects that repeat on a
retry are notifications (email, SMS, push), metric counts aside, and that touches no money or
account state is flagged ``fast_track``; a duplicate is visible but harmless,
so ``migrator plan`` moves it right after the idempotent jobs (phase 2). It
gets a suggested key (``inventory._classify._suggest``: a digest of every
argument, never a subset that could merge two different mails) whether or
not a key is declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from inventory._classify._suggest import call_key
from inventory._classify._trace import GapReason, Trace
from inventory.config import JobSetting, key_function
from inventory.models import Confidence, EffectKind, Evidence, Idempotency, UnexplainedCall

K = EffectKind
MONEY = frozenset({K.PAYMENT, K.ACCOUNT_STATE})
NOTIFY = frozenset({K.EMAIL_SEND, K.SMS_SEND, K.PUSH_SEND})
REPEATS = frozenset(
    {K.DB_INSERT, K.DB_INCREMENT, K.FILE_APPEND, K.CACHE_INCR, K.HTTP_POST, K.HTTP_PATCH}
    | {K.MESSAGE_PUBLISH, K.SOCKET_EMIT, K.ENQUEUE, K.METRIC_INCR}
    | NOTIFY
)
OPAQUE = frozenset({K.DYNAMIC_CALL, K.SUBPROCESS})
# What is not work of its own: next to any other effect, metric counts are instrumentation.
# A change of this process's memory is none either (an entry evicted from an in-process
# cache): what a retry would repeat of a job that counts and evicts is its count.
_NOT_WORK = frozenset(
    {K.METRIC_INCR, K.DB_READ, K.HTTP_GET, K.SLEEP, K.RANDOM_ID, K.PROCESS_STATE}
    | {K.REQUEST_READ}
    | OPAQUE
)
# Repeats a duplicate makes visible but harmless: the fast track ignores them.
HARMLESS = NOTIFY | {K.METRIC_INCR}

_WHAT = {
    K.DB_READ: "reads the database",
    K.DB_INSERT: "inserts a row: a retry inserts another",
    K.DB_UPSERT: "upserts: a retry converges on the same row",
    K.DB_OVERWRITE: "overwrites a row: a retry writes the same values",
    K.DB_INCREMENT: "increments a stored value: a retry adds twice",
    K.DB_DELETE: "deletes: a retry finds nothing left to delete",
    K.FILE_WRITE: "overwrites a file",
    K.FILE_APPEND: "appends to a file: a retry appends again",
    K.FILE_DELETE: "deletes a file: a retry finds nothing left to delete",
    K.HTTP_GET: "HTTP GET",
    K.HTTP_PUT: "HTTP PUT (idempotent by HTTP semantics)",
    K.HTTP_DELETE: "HTTP DELETE (idempotent by HTTP semantics)",
    K.HTTP_POST: "HTTP POST: a retry posts again",
    K.HTTP_PATCH: "HTTP PATCH: not idempotent in general",
    K.EMAIL_SEND: "sends an email: a retry sends it twice",
    K.SMS_SEND: "sends an SMS: a retry sends it twice",
    K.PUSH_SEND: "sends a push notification: a retry sends it twice",
    K.PAYMENT: "moves money",
    K.ACCOUNT_STATE: "changes money or account state (a balance, stock, an order, a subscription): a retry may apply it twice",
    K.MESSAGE_PUBLISH: "publishes a message: a retry publishes it twice",
    K.SOCKET_EMIT: "sends a message to connected clients (Socket.IO): a retry sends it again",
    K.REQUEST_HOOK: "acts on the request being served (a hook on its response, a flashed "
    "message, its session): only the process serving it can",
    K.REQUEST_READ: "reads the request being served (Flask's request, session or g, the "
    "current user): only the process serving it can",
    K.PROCESS_STATE: "changes state this process holds in memory (a module-level container or "
    "global): a worker would change its own copy",
    K.ENQUEUE: "enqueues further work: a retry enqueues it twice",
    K.CACHE_SET: "sets a cache key",
    K.CACHE_INCR: "grows a cache value (incr/push): a retry grows it twice",
    K.CACHE_DELETE: "deletes a cache key",
    K.METRIC_INCR: "counts in a metric (counter +1, histogram observation): a retry counts again",
    K.OBJECT_PUT: "puts an object to a key",
    K.RANDOM_ID: "makes a random or time-based value",
    K.IMAGE_PROCESS: "processes an image",
    K.REPORT_GENERATE: "builds a report",
    K.SUBPROCESS: "runs an external program whose effects are invisible here",
    K.SLEEP: "sleeps (slow, harmless on retry)",
    K.DYNAMIC_CALL: "calls something only known at run time",
}


@dataclass(frozen=True)
class Verdict:
    idempotency: Idempotency
    confidence: Confidence
    evidence: list[Evidence] = field(default_factory=list)
    suggested_key: str | None = None
    pinned: bool = False
    fast_track: bool = False
    declared_key: str | None = None
    keyless: Idempotency | None = None  # the verdict without the declared key, when it differs
    unexplained: tuple[UnexplainedCall, ...] = ()  # calls it could not follow


@dataclass(frozen=True)
class Enqueues:
    """What the enqueues of one job run: each API with the project task it enqueues."""

    settled: dict[str, str]  # the task's own work is idempotent: no repeat
    unknown: dict[str, str]  # the task's own verdict is unknown: still a repeat, said so
    gaps: dict[str, tuple[str, ...]]  # an unknown task -> the calls it could not follow


NONE = Enqueues({}, {}, {})


FAST_TRACK = "notification fast track"
ENQUEUES_IDEMPOTENT = (
    "enqueues {task}, whose own work is idempotent: a duplicate enqueue runs it twice to "
    "the same end"
)
ENQUEUES_UNKNOWN = (
    "enqueues {task}, whose own verdict is unknown (it reaches calls the scan could not "
    "follow: {gaps}): a retry enqueues it twice, which repeats whatever it does; explain "
    "those calls and, if its work converges, the enqueue repeats nothing that matters"
)


def _taken(trace: Trace, enqueues: Mapping[str, str]) -> bool:
    return trace.kind == K.ENQUEUE and trace.api in enqueues and not trace.guessed_via


def _evidence(trace: Trace, enqueues: Enqueues) -> Evidence:
    if not trace.is_effect:
        return _note(trace)
    found = effect_evidence(trace)
    if _taken(trace, enqueues.settled):
        what = ENQUEUES_IDEMPOTENT.format(task=enqueues.settled[trace.api])
    elif _taken(trace, enqueues.unknown):
        task = enqueues.unknown[trace.api]
        what = ENQUEUES_UNKNOWN.format(task=task, gaps=_some(list(enqueues.gaps.get(task, ()))))
    else:
        return found
    return found.model_copy(update={"message": f"{trace.api}: {what}"})


def decide(
    job: str,
    params: list[str],
    traces: list[Trace],
    setting: JobSetting | None,
    enqueues: Enqueues = NONE,
) -> Verdict:
    """``enqueues`` (``_enqueued``): the enqueue APIs whose task is idempotent, each with
    its task (a duplicate enqueue runs it twice to the same end, so it is no repeat), and
    those whose task's verdict is unknown (a repeat, whose evidence names the task's gaps)."""
    effects = [t for t in traces if t.is_effect and not _taken(t, enqueues.settled)]
    evidence = [_evidence(t, enqueues) for t in traces if not t.gap]
    declared = setting.key if setting is not None and setting.key else None
    if setting is not None and setting.idempotency is not None:
        pin_note = Evidence(message=f"pinned in [tool.migrator.jobs]: {setting.reason}")
        return Verdict(
            setting.idempotency,
            Confidence.HIGH,
            [*evidence, pin_note],
            pinned=True,
            declared_key=declared,
        )
    unresolved = _unresolved(traces)
    guessed = sorted({t.gap_name for t in traces if t.gap and t.guessed_via})
    gaps = [name for names in unresolved.values() for name in names] + guessed
    verdict, reason = _rule(effects, setting, gaps)
    keyless = _rule(effects, None, gaps)[0] if declared else verdict
    confidence = _confidence(verdict, traces)
    fast = _fast_track(effects) and verdict in (Idempotency.NON_IDEMPOTENT, Idempotency.NEEDS_KEY)
    key = call_key(job) if fast else None  # a notification: one key per call, never merged
    for why, names in unresolved.items():
        evidence.append(Evidence(message=f"unresolved calls ({why}): {_some(names, 8)}"))
    if guessed:
        message = f"may run behind calls guessed by method name or override: {_some(guessed, 8)}"
        evidence.append(Evidence(message=message))
    if fast:
        evidence.append(Evidence(message=_fast_track_message(effects, key, declared)))
    return Verdict(
        verdict,
        confidence,
        [*evidence, Evidence(message=reason)],
        key,
        fast_track=fast,
        declared_key=declared,
        keyless=keyless if keyless != verdict else None,
        unexplained=_unexplained(traces),
    )


def _unresolved(traces: list[Trace]) -> dict[GapReason, list[str]]:
    """The gaps not behind a guess, by why they are gaps (one evidence line each, worded
    "unresolved calls (why): ..." for every reason, so that readers of gaps count them all)."""
    found: dict[GapReason, set[str]] = {}
    for t in traces:
        if t.gap and not t.guessed_via:
            found.setdefault(t.found.why_unresolved, set()).add(t.gap_name)
    return {why: sorted(found[why]) for why in GapReason if why in found}


def _unexplained(traces: list[Trace]) -> tuple[UnexplainedCall, ...]:
    """The gaps, unresolved then guessed, each with the catalogue entry that would explain it."""
    unresolved = {
        t.gap_name: UnexplainedCall(
            call=t.gap_name, entry=t.found.entry, receiver=t.found.entry_receiver
        )
        for t in traces
        if t.gap and not t.guessed_via
    }
    guessed = {t.gap_name for t in traces if t.gap and t.guessed_via} - unresolved.keys()
    return tuple(
        [unresolved[name] for name in sorted(unresolved)]
        + [UnexplainedCall(call=name) for name in sorted(guessed)]
    )


def _fast_track(effects: list[Trace]) -> bool:
    """Only notifications repeat on a retry, and nothing touches money or opaque code."""
    if any(t.kind in MONEY or t.kind in OPAQUE for t in effects):
        return False
    repeats = {t.kind for t in effects if _repeats(t)}
    return bool(repeats & NOTIFY) and repeats <= HARMLESS


def _fast_track_message(effects: list[Trace], suggested: str | None, declared: str | None) -> str:
    kinds = ", ".join(sorted({t.kind.value for t in effects if _repeats(t)}))
    key = f"declared key {declared!r}" if declared else f"suggested key {suggested!r}"
    return (
        f"{FAST_TRACK}: the only effects a retry repeats are notifications ({kinds}); "
        f"a duplicate is visible but harmless: {key}"
    )


_Outcome = tuple[Idempotency, str] | None


def _rule(
    effects: list[Trace], setting: JobSetting | None, gaps: list[str] | None = None
) -> tuple[Idempotency, str]:
    """The first rule that decides, in the order of the module docstring."""
    effects = _without_instrumentation(effects)
    repeats = [t for t in effects if _repeats(t)]
    bare = [t for t in repeats if not t.keyed and not t.natural_key and not t.guard]
    for outcome in (
        _unsafe(effects),
        _declared_key(setting),
        _non_idempotent(bare, effects),
        _unknown(effects),
        _keyed(effects, repeats),
        _natural_key(repeats),
        _guarded([*repeats, *(t for t in effects if t.kind in OPAQUE)]),
        _non_idempotent(repeats, effects),
    ):
        if outcome is not None:
            return outcome
    if gaps:
        return _unsound(effects, gaps)
    if not effects:
        return Idempotency.IDEMPOTENT, "every call it reaches is explained, and none has an effect"
    return (
        Idempotency.IDEMPOTENT,
        "only reads, overwrites, upserts, deletes or derived writes",
    )


def _without_instrumentation(effects: list[Trace]) -> list[Trace]:
    """Metric counts decide only when counting is all the job does: next to real work
    (a write, a send) they are instrumentation, a double count that changes no outcome."""
    if all(t.kind in _NOT_WORK for t in effects):
        return effects
    return [t for t in effects if t.kind != K.METRIC_INCR]


def _unsound(effects: list[Trace], gaps: list[str]) -> tuple[Idempotency, str]:
    """The soundness rule: ``idempotent`` needs every reached call explained."""
    found = "no effect found" if not effects else "only idempotent effects found"
    return (
        Idempotency.UNKNOWN,
        f"{found}, but calls could not be followed ({_some(gaps)}): what they do is "
        "unknown, so the job cannot be called idempotent",
    )


def _unsafe(effects: list[Trace]) -> _Outcome:
    money = sorted({t.api for t in effects if t.kind in MONEY and not t.keyed})
    if not money:
        return None
    return (
        Idempotency.UNSAFE,
        f"money or account state changes without a derived key ({_some(money)})",
    )


def _declared_key(setting: JobSetting | None) -> _Outcome:
    if setting is None or not setting.key:
        return None
    what = "key function" if key_function(setting.key) else "key"
    return (
        Idempotency.NEEDS_KEY,
        f"declared idempotency {what} {setting.key!r} in [tool.migrator.jobs]: "
        "safe once every enqueue carries it",
    )


def _unknown(effects: list[Trace]) -> _Outcome:
    """Opaque calls behind a dedup guard are left to ``_guarded``: when the guard holds a
    repeat never reaches them; when it fails, the job needs a key anyway."""
    opaque = sorted({t.api for t in effects if t.kind in OPAQUE and not t.guard})
    return (
        (Idempotency.UNKNOWN, f"effects hidden behind {_some(opaque)}, known only at run time")
        if opaque
        else None
    )


def _keyed(effects: list[Trace], repeats: list[Trace]) -> _Outcome:
    money = any(t.kind in MONEY for t in effects)
    if not (money or repeats) or not all(t.keyed for t in repeats):
        return None
    return (
        Idempotency.NEEDS_KEY,
        "safe only with the idempotency keys it passes, derived from its inputs",
    )


def _natural_key(repeats: list[Trace]) -> _Outcome:
    natural = sorted({t.natural_key for t in repeats if t.natural_key and not t.keyed})
    if not natural or not all(t.keyed or t.natural_key for t in repeats):
        return None
    reason = f"a retry only duplicates rows with a natural key ({_some(natural)}): "
    return (
        Idempotency.NEEDS_KEY,
        reason + "a unique constraint or get_or_create on it makes the job safe",
    )


def _guarded(repeats: list[Trace]) -> _Outcome:
    """Every repeat sits behind a dedup guard (a claim, a check-then-act): safe only while
    the guard holds, and a guard can expire or race."""
    guards = sorted({t.guard for t in repeats if t.guard and not t.keyed})
    if not guards or not all(t.keyed or t.natural_key or t.guard for t in repeats):
        return None
    reason = f"a retry is stopped only by a dedup guard ({_some(guards)}): "
    return Idempotency.NEEDS_KEY, reason + "it can expire or race, so a key makes it safe"


def _non_idempotent(repeats: list[Trace], effects: list[Trace]) -> _Outcome:
    """What is known to repeat decides the lower bound: an opaque call can only make it
    worse, so it does not hide a known insert or send behind ``unknown``."""
    names = sorted({t.kind.value for t in repeats})
    if not names:
        return None
    reason = f"a retry repeats {', '.join(names)}"
    opaque = sorted({t.api for t in effects if t.kind in OPAQUE})
    if opaque:
        reason += f"; effects hidden behind {_some(opaque)} are only known at run time"
    return Idempotency.NON_IDEMPOTENT, reason


def _some(names: list[str], shown: int = 3) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _repeats(trace: Trace) -> bool:
    if trace.kind == K.RANDOM_ID:
        return trace.stored
    return trace.kind in REPEATS


def _confidence(verdict: Idempotency, traces: list[Trace]) -> Confidence:
    effects = [t for t in traces if t.is_effect]
    if verdict == Idempotency.UNKNOWN or any(t.gap or t.kind in OPAQUE for t in traces):
        return Confidence.LOW
    if not effects or not all(t.exact for t in effects):
        return Confidence.MEDIUM
    return Confidence.HIGH


def effect_evidence(trace: Trace) -> Evidence:
    effect = trace.effect
    return Evidence(message=_message(trace), location=effect.location, chain=list(effect.chain))


def _message(trace: Trace) -> str:
    api, kind, keyed_by = trace.api, trace.kind, trace.keyed_by
    if trace.keyed:
        return f"{api}: {kind.value} keyed by {keyed_by} derived from the job's inputs: a retry is recognisable"
    if trace.minted_key:
        risk = "money may move twice" if kind in MONEY else "a retry sends a new key"
        return (
            f"{api}: {kind.value} with a {keyed_by} minted inside the job (uuid4, time...): {risk}"
        )
    if kind in MONEY and keyed_by:
        return f"{api} without {keyed_by}: money may move twice"
    if kind in MONEY and trace.effect.detail:
        return f"{api}: {trace.effect.detail}"  # why it is money: a name, a field, a model
    if trace.stored and trace.guard:
        return (
            f"{api}: a random or time-based value stored only behind a dedup guard ({trace.guard})"
        )
    if trace.stored:
        return f"{api}: a random or time-based value stored next to a write: a retry stores a different one"
    if kind in OPAQUE and trace.effect.detail:
        return f"{api}: {trace.effect.detail}"  # why it is opaque: a stored callable, SQL text...
    return f"{api}: {_WHAT[kind]}"


def _note(trace: Trace) -> Evidence:
    effect = trace.effect
    return Evidence(
        message=f"{effect.api}: {effect.detail}", location=effect.location, chain=list(effect.chain)
    )
