"""Building blocks shared by the site detectors."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from inventory._extract._resolve import Resolved, public_name
from inventory._extract._scopes import ClassCtx
from inventory._extract._source import Located, span_of
from inventory._extract._state import Candidate, FunctionState, Use, UseKind
from inventory._extract.detectors._targets import JobTarget
from inventory.models import Argument, Framework, Pattern
from inventory.summary import RawSite, ReceiverKind, TargetKind

_GUESSABLE = (ReceiverKind.MODULE, ReceiverKind.CLASS, ReceiverKind.UNKNOWN)


@dataclass(slots=True)
class CallSite:
    """One call being examined, with what the file knows around it."""

    node: ast.Call
    resolved: Resolved
    method: str  # last attribute of the callee ("" for a plain name)
    use: Use | None
    state: FunctionState
    classes: dict[str, ClassCtx]
    frameworks: set[Framework]

    @property
    def target(self) -> str:
        return self.resolved.target

    @property
    def receiver_type(self) -> str | None:
        return self.resolved.receiver_type

    @property
    def scoped(self) -> bool:
        """The receiver was bound by ``with X() as name``: X's exit waits for the work."""
        binding = self.resolved.binding
        return binding is not None and binding.scoped


def receiver_note(
    call: CallSite, types: frozenset[str], label: str, words: tuple[str, ...]
) -> str | None:
    """ "" when the receiver is typed as one of ``types``; a note when only its name says
    so (see :func:`guessed_from_name`); None when it is something else."""
    if call.receiver_type in types:
        return ""
    return guessed_from_name(call, label, words)


def guessed_from_name(call: CallSite, label: str, words: tuple[str, ...]) -> str | None:
    """When the receiver's type is unknown here (defined in another module, an unannotated
    parameter), its name may still say what it is: ``workers.EXECUTOR``, ``self.pool``.
    Returns the note to put in the site's detail, or None."""
    resolved = call.resolved
    if call.receiver_type is not None or resolved.receiver not in _GUESSABLE:
        return None
    source = resolved.receiver_source
    name = source.rpartition(".")[2].lower()
    if not source.replace(".", "").replace("_", "").isalnum() or not any(w in name for w in words):
        return None
    return f"{source} taken for {label} from its name"


def argument_node(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    """The argument at ``index`` or passed as ``keyword=``; None when absent or after ``*x``."""
    for found in call.keywords:
        if found.arg == keyword:
            return found.value
    args = call.args
    if index < len(args) and not any(isinstance(a, ast.Starred) for a in args[: index + 1]):
        return args[index]
    return None


def keyword_true(call: ast.Call, keyword: str) -> bool:
    return any(
        k.arg == keyword and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def waited_at_once(use: Use | None, methods: frozenset[str]) -> bool:
    """``ex.submit(f).result()``, ``gather(create_task(f()))``: the caller waits right there."""
    if use is None:
        return False
    return use.kind is UseKind.WAITED or (use.kind is UseKind.RECEIVER and use.name in methods)


def result_of(use: Use | None) -> tuple[bool, str, str | None]:
    """(result_used, detail, name the result is bound to) from how the parent uses the call."""
    if use is None:
        return True, "", None
    kind = use.kind
    if kind is UseKind.DISCARDED:
        return False, "", None
    if kind is UseKind.AWAITED_DISCARDED:
        return False, "awaited", None
    if kind is UseKind.AWAITED:
        return True, "awaited", None
    if kind is UseKind.BOUND or kind is UseKind.WITH:
        return False, "awaited" if use.awaited else "", use.name
    if kind is UseKind.WAITED:
        return True, "waited for", None
    if kind is UseKind.RETURNED:
        return True, "returned to the caller", None
    return True, "", None


def candidate(
    pattern: Pattern,
    node: Located,
    job: JobTarget,
    call: CallSite,
    arguments: list[Argument],
    detail: str = "",
) -> Candidate:
    used, how, bound = result_of(call.use)
    if job.kind is TargetKind.DYNAMIC:
        job = _through_alias(job, call.state.param_aliases)
    site = RawSite(
        pattern=pattern,
        span=span_of(node),
        target=public_name(job.target, call.state.resolver.module) if job.target else None,
        target_kind=job.kind,
        target_source=job.source,
        returned_from=public_name(job.returned, call.state.resolver.module) if job.returned else "",
        unresolved_reason=job.reason,
        enclosing_function=call.state.qualname,
        handler=call.state.handler,
        result_used=used,
        arguments=[*job.arguments, *arguments],
        detail=", ".join(part for part in (detail, how) if part),
    )
    if bound:
        call.state.watch_name(bound)
    return Candidate(site, bound)


def _through_alias(job: JobTarget, aliases: dict[str, str]) -> JobTarget:
    """``self.coro = coro`` then ``create_task(self.coro)``: the job is the parameter
    ``coro`` (what makes the function a spawn wrapper); also ``self.fn(*a)``."""
    written = job.source.strip()
    root = written.partition("(")[0].strip()
    param = aliases.get(root)
    if param is None:
        return job
    reason = f"{job.reason} ('{root}' holds the parameter '{param}')".strip()
    return replace(job, source=param + written[len(root) :], reason=reason)


def evaluated_in_caller(node: ast.expr, job: JobTarget) -> bool:
    """``pool.submit(log(x))`` / ``Thread(target=f(x))``: the call runs in the caller at
    once and only its result (usually None) is handed over: a look-alike, not a hand-off.
    ``partial(f, x)`` resolves to ``f`` and ``getattr(o, name)`` stays a dynamic target."""
    if not isinstance(node, ast.Call) or job.kind is not TargetKind.DYNAMIC or job.param:
        return False  # ``partial(func, x)`` of a parameter: the wrapper's callable, handed over
    return not (isinstance(node.func, ast.Name) and node.func.id == "getattr")
