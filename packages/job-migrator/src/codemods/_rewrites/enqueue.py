"""Shared pieces of every rewrite: recognise the job, build ``fn.enqueue(...)``.

The rewritten call reuses the argument nodes of the original call, so the
whitespace, line breaks and comments inside them survive byte for byte.
Rewrites share only what is here: none imports another rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import libcst as cst
import libcst.matchers as m

from codemods._syntax import code, dotted, last_name, replace_expression, statement_call
from codemods._types import Block, Edit, Import, Skip, Target
from inventory.config import MigrationTarget, key_function

# ``{param}`` or ``{param.attr.attr}``: group 1 the parameter, group 2 the attribute path.
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")
DIGEST = "{*}"  # a digest of every argument: queue_runtime.keys.digest_key(job, *args, **kwargs)
DIGEST_FUNCTION = "digest_key"
DIGEST_IMPORT = ("queue_runtime.keys", DIGEST_FUNCTION)
PER_CALL = "{+}"  # a fresh id for each call, made at the enqueue site: queue_runtime.keys
PER_CALL_IMPORT = ("uuid", "uuid4")
# ``k=v`` as a keyword argument is written: no spaces around the sign.
KEYWORD_EQUAL = cst.AssignEqual(
    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
)

# What a rewrite that keeps the site's inline shape needs imported.
SHAPE_IMPORT = Import("queue_runtime", "InlineShape")


class SiteShape(StrEnum):
    """How the site ran the job: the member of the runtime's ``InlineShape`` it passes."""

    THREAD = "THREAD"
    EXECUTOR = "EXECUTOR"
    TASK = "TASK"


@dataclass(frozen=True)
class Inline:
    """``inline=InlineShape.<shape>`` (and ``executor=<expr>``) for ``fn.options(...)``.

    While the gate keeps the job inline, the runtime then runs it as the site
    did (a thread, the executor, a task on the loop), never in the request.
    """

    shape: SiteShape
    executor: cst.BaseExpression | None = None

    def args(self) -> list[cst.Arg]:
        value = cst.parse_expression(f"InlineShape.{self.shape.value}")
        found = [cst.Arg(keyword=cst.Name("inline"), value=value, equal=KEYWORD_EQUAL)]
        if self.executor is not None:
            executor = self.executor.with_changes(lpar=[], rpar=[])
            found.append(cst.Arg(keyword=cst.Name("executor"), value=executor, equal=KEYWORD_EQUAL))
        return found


def shaped(
    replacements: dict[int, list[cst.BaseStatement]], inline: Inline | None, target: Target
) -> Edit:
    """The edit of a rewrite, with the ``InlineShape`` import when the site keeps its shape."""
    return Edit(replacements, adds=shape_imports(target) if inline is not None else ())


def shape_imports(target: Target) -> tuple[Import, ...]:
    """What keeping a site's inline shape imports (nothing on Django's API, which keeps none)."""
    return (SHAPE_IMPORT,) if target.api is MigrationTarget.QUEUE_RUNTIME else ()


def is_job_ref(expr: cst.BaseExpression, target: Target) -> bool:
    """True when ``expr`` names the site's job (by its own name or as written at the site)."""
    name = dotted(expr)
    if name is None:
        return False
    if name in (target.site.target_source, _called(target.site.target_source)):
        return True
    head, _, last = name.rpartition(".")
    if last != target.name:
        return False
    # ``send(...)``, or ``mail.send(...)`` / ``Mailer.send(...)`` where the prefix is the tail
    # of the job's own dotted path; ``instance.flag.send()`` is a method of something else.
    owners = (target.job.qualname.rpartition(".")[0], target.qualpath.rpartition(".")[0])
    return not head or any(o and f".{o}".endswith(f".{head}") for o in owners)


def _called(written: str) -> str | None:
    """The called name of a site written as a call (a task's ``Users.touch(user.id)``)."""
    try:
        expr = cst.parse_expression(written) if written.endswith(")") else None
    except cst.ParserSyntaxError:
        return None
    return dotted(expr.func) if isinstance(expr, cst.Call) else None


def unwrap(
    expr: cst.BaseExpression, target: Target
) -> tuple[cst.BaseExpression, list[cst.Arg]] | None:
    """The job reference and its bound arguments in ``fn``, ``partial(fn, a)`` or ``lambda: fn(a)``."""
    if is_job_ref(expr, target):
        return expr, []
    if isinstance(expr, cst.Call) and last_name(expr.func) == "partial" and expr.args:
        head, *rest = expr.args
        if head.keyword is None and not head.star and is_job_ref(head.value, target):
            return head.value, list(rest)
    if isinstance(expr, cst.Lambda) and isinstance(expr.body, cst.Call):
        body = expr.body
        if is_job_ref(body.func, target) and not _lambda_has_params(expr):
            return body.func, list(body.args)
    return None


def _lambda_has_params(node: cst.Lambda) -> bool:
    p = node.params
    return bool(
        p.params
        or p.kwonly_params
        or p.posonly_params
        or not isinstance(p.star_arg, cst.MaybeSentinel)
        or p.star_kwarg
    )


def join_args(*groups: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Concatenate argument lists; commas are kept when only one list contributes."""
    nonempty = [list(g) for g in groups if g]
    if len(nonempty) <= 1:
        return nonempty[0] if nonempty else []
    flat = [a for g in nonempty for a in g]
    return [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in flat]


def enqueue_call(
    func: cst.BaseExpression,
    args: list[cst.Arg],
    target: Target,
    like: cst.Call | None = None,
    inline: Inline | None = None,
) -> cst.Call | Skip:
    """``func.enqueue(args...)`` (plus ``idempotency_key=`` when the job needs one).

    A target with a wrapper enqueues the wrapper (imported by its bare name);
    arguments with an edit (``str(...)``, ``.pk``) go in edited. A site that
    keeps its inline shape goes through ``func.options(inline=..., ...)``, and
    so does its key then.
    """
    if target.wrapper is not None:
        func = cst.Name(target.wrapper.name)
    func = _task_itself(func, target)
    args = [_edited(arg, target) for arg in args]
    if target.wrapper is not None and target.wrapper.passes:
        # A lifted nested function: what it read of the enclosing function, passed by name.
        passed = [
            cst.Arg(keyword=cst.Name(v), value=cst.Name(v), equal=KEYWORD_EQUAL)
            for v in target.wrapper.passes
        ]
        args = join_args(args, passed)
    # Django's task.enqueue() takes no queue options: the site's inline shape is not kept
    # (the gate's inline runs happen in the caller), and keyed sites never get here.
    django = target.api is MigrationTarget.DJANGO_TASKS
    options = inline.args() if inline is not None and not django else []
    if target.key_template is not None:
        key = key_expression(target.key_template, args, target.job.parameters, func)
        if isinstance(key, Skip):
            return key
        key_arg = cst.Arg(keyword=cst.Name("idempotency_key"), value=key, equal=KEYWORD_EQUAL)
        # A job with a parameter of that name takes the key through .options() only.
        if options or "idempotency_key" in target.job.parameters:
            options = [key_arg, *options]
        else:
            args = append_arg(args, key_arg)
    attr = cst.Attribute(value=_with_options(func, options), attr=cst.Name("enqueue"))
    if like is None:
        return cst.Call(func=attr, args=args)
    return like.with_changes(func=attr, args=args)


def _task_itself(func: cst.BaseExpression, target: Target) -> cst.BaseExpression:
    """A Django task run in the caller as ``send.call(a)`` moves as ``send.enqueue(a)``:
    ``call`` is the task's synchronous run, not the job (``send.call.enqueue`` is no API)."""
    if (
        target.job.django_task
        and isinstance(func, cst.Attribute)
        and func.attr.value == "call"
        and target.name != "call"
    ):
        return func.value
    return func


def _with_options(func: cst.BaseExpression, options: list[cst.Arg]) -> cst.BaseExpression:
    """``func.options(k=v, ...)``, or ``func`` itself without options."""
    if not options:
        return func
    joined = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in options]
    return cst.Call(func=cst.Attribute(value=func, attr=cst.Name("options")), args=joined)


def _edited(arg: cst.Arg, target: Target) -> cst.Arg:
    written = code(arg.value).strip()
    for edit in target.edits:
        if edit.source.strip() == written:
            return arg.with_changes(value=cst.parse_expression(edit.replacement))
    return arg


def append_arg(args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    if not args or isinstance(args[-1].comma, cst.MaybeSentinel):
        return [*args, new]
    # A trailing comma means the call is laid out one argument per line: keep that layout.
    sep = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [*args[:-1], args[-1].with_changes(comma=sep), new.with_changes(comma=args[-1].comma)]


def key_expression(
    template: str,
    args: Sequence[cst.Arg],
    params: list[str],
    job: cst.BaseExpression | None = None,
) -> cst.BaseExpression | Skip:
    """An f-string for ``template`` whose ``{param}`` placeholders are the call's argument expressions.

    ``{param.attr}`` reads an attribute of the argument; ``{*}`` is
    ``digest_key(job, args...)`` (``queue_runtime.keys``: a digest of every
    argument), and a template that is only ``{*}`` is that call itself; ``{+}`` is
    ``uuid4().hex``, a fresh id made at this call and stored with its job. A key
    function (``pkg.mod:func``) is called with the call's own arguments
    instead: ``func(args...)``. The caller imports what the key calls
    (:func:`key_imports`).
    """
    function = key_function(template)
    if (function is not None or DIGEST in template) and any(arg.star for arg in args):
        return Skip("idempotency key: arguments are unpacked with * or **")
    copied = ", ".join(code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in args)
    if function is not None:
        return cst.parse_expression(f"{function[1]}({copied})")
    digest = f"{DIGEST_FUNCTION}({', '.join(filter(None, [_job_source(job), copied]))})"
    if template == DIGEST:
        return cst.parse_expression(digest)
    bound = bind(args, params)
    if isinstance(bound, Skip):
        return bound
    missing = [mt[1] for mt in _PLACEHOLDER.finditer(template) if mt[1] not in bound]
    if missing:
        return Skip(f"idempotency key template {template!r}: no argument for {', '.join(missing)}")
    text = _PLACEHOLDER.sub(lambda mt: "{" + _field(bound[mt[1]], mt[2]) + "}", template)
    text = text.replace(DIGEST, "{" + digest + "}").replace(PER_CALL, "{uuid4().hex}")
    quote = '"' if '"' not in text else "'"
    if quote in text or "\\" in text or "\n" in text:
        return Skip(
            f"idempotency key template {template!r}: argument expressions need quoting by hand"
        )
    return cst.parse_expression(
        f"f{quote}{text}{quote}" if "{" in text else f"{quote}{text}{quote}"
    )


def _job_source(job: cst.BaseExpression | None) -> str:
    return "" if job is None else code(job)


def _field(source: str, path: str) -> str:
    """``source`` + the template's attribute path; an expression that is not a name is bracketed."""
    if not path or re.fullmatch(r"[A-Za-z_][\w.]*", source):
        return source + path
    return f"({source}){path}"


def key_imports(template: str | None) -> list[tuple[str, str]]:
    """``(module, name)`` of what the key expression of ``template`` calls, to import."""
    if template is None:
        return []
    function = key_function(template)
    if function is not None:
        return [function]
    found = [DIGEST_IMPORT] if DIGEST in template else []
    return [*found, PER_CALL_IMPORT] if PER_CALL in template else found


def bind(args: Sequence[cst.Arg], params: list[str]) -> dict[str, str] | Skip:
    """Parameter name -> argument source, for a call without ``*``/``**`` unpacking."""
    bound: dict[str, str] = {}
    for index, arg in enumerate(args):
        if arg.star:
            return Skip("idempotency key: arguments are unpacked with * or **")
        if arg.keyword is not None:
            bound[arg.keyword.value] = code(arg.value)
        elif index < len(params):
            bound[params[index]] = code(arg.value)
    return bound


ALREADY = "already enqueues"
# A Django task's enqueue is a hand-off to whichever backend settings.TASKS names: under
# the default ImmediateBackend the task still runs in the request. The change that moves it
# is the setting, not the code (docs/django.md).
DJANGO_TASK_ALREADY = (
    "already enqueues a Django task (`{job}`), which runs where settings.TASKS sends it: in "
    "the request under Django's default ImmediateBackend; the change that moves it is the "
    'setting, not this code: TASKS = {{"default": {{"BACKEND": '
    '"queue_runtime.django.TaskBackend"}}}} runs it on queue_runtime\'s workers'
)


def already_reason(target: Target) -> str:
    """Why a site that already enqueues stays as it is."""
    if target.job.django_task:
        return DJANGO_TASK_ALREADY.format(job=target.job.qualname)
    return ALREADY


def already_enqueues(stmt: cst.CSTNode, target: Target) -> bool:
    """A second run: the statement already calls ``<job>.enqueue(...)``."""
    for call in m.findall(stmt, m.Call(func=m.Attribute(attr=m.Name("enqueue")))):
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        if is_job_ref(without_options(call.func.value), target):
            return True
    return False


def without_options(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``fn`` of ``fn.options(...)`` (what ``.enqueue`` is called on), else ``expr``."""
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "options"
    ):
        return expr.func.value
    return expr


def enqueue_statement(block: Block, index: int, target: Target) -> Edit | Skip | None:
    """A statement that calls the job (``fn(a)``, ``await fn(a)``) -> ``fn.enqueue(a)``."""
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None or not is_job_ref(call.func, target):
        return None
    assert isinstance(stmt, cst.SimpleStatementLine)
    new = enqueue_call(call.func, list(call.args), target, like=call)
    if isinstance(new, Skip):
        return new
    return Edit({index: [replace_expression(stmt, new)]})


_TASKS = frozenset({"create_task", "ensure_future"})
_HANDED_AT = {"run_in_executor": 1, "to_thread": 0}  # the index of the function argument


def enqueue_handoff(
    call: cst.Call, target: Target, keep_shape: bool = True
) -> cst.Call | Skip | None:
    """``fn.options(inline=...).enqueue(a)`` for an asyncio hand-off of the job.

    A task keeps ``InlineShape.TASK``; ``run_in_executor(pool, ...)`` keeps
    ``EXECUTOR`` with its pool (``None``, and ``to_thread``: the loop's default).
    ``keep_shape=False``: a plain ``fn.enqueue(a)`` (a hand-off whose value the
    caller awaited for its answer).
    """
    method = (
        last_name(call.func) if not isinstance(call.func, cst.Attribute) else call.func.attr.value
    )
    positional = [a for a in call.args if a.keyword is None]
    if method in _TASKS and positional and isinstance(positional[0].value, cst.Call):
        coro = positional[0].value
        if not is_job_ref(coro.func, target):
            return None
        task = Inline(SiteShape.TASK) if keep_shape else None
        return enqueue_call(coro.func, list(coro.args), target, coro, task)
    skip = _HANDED_AT.get(method or "")
    if skip is None or len(call.args) <= skip:
        return None
    found = unwrap(call.args[skip].value, target)
    if found is None:
        return None
    args = join_args(found[1], call.args[skip + 1 :])
    executor = _handoff_executor(call, skip) if keep_shape else None
    return enqueue_call(found[0], args, target, call, executor)


def _handoff_executor(call: cst.Call, at: int) -> Inline:
    """``EXECUTOR`` with ``run_in_executor``'s first argument, unless it is ``None``."""
    given = call.args[0].value if at == 1 else None
    if isinstance(given, cst.Name) and given.value == "None":
        given = None
    return Inline(SiteShape.EXECUTOR, given)
