"""Shared pieces of every rewrite: recognise the job, build ``fn.enqueue(...)``.

The rewritten call reuses the argument nodes of the original call, so the
whitespace, line breaks and comments inside them survive byte for byte.
Rewrites share only what is here: none imports another rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from codemods._syntax import code, dotted, last_name, replace_expression, statement_call
from codemods._types import Block, Edit, Skip, Target
from inventory.config import key_function

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# ``k=v`` as a keyword argument is written: no spaces around the sign.
KEYWORD_EQUAL = cst.AssignEqual(
    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
)


def is_job_ref(expr: cst.BaseExpression, target: Target) -> bool:
    """True when ``expr`` names the site's job (by its own name or as written at the site)."""
    name = dotted(expr)
    if name is None:
        return False
    return name.rsplit(".", 1)[-1] == target.name or name == target.site.target_source


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
    func: cst.BaseExpression, args: list[cst.Arg], target: Target, like: cst.Call | None = None
) -> cst.Call | Skip:
    """``func.enqueue(args...)`` (plus ``idempotency_key=`` when the job needs one).

    A target with a wrapper enqueues the wrapper (imported by its bare name);
    arguments with an edit (``str(...)``, ``.pk``) go in edited.
    """
    if target.wrapper is not None:
        func = cst.Name(target.wrapper.name)
    args = [_edited(arg, target) for arg in args]
    attr = cst.Attribute(value=func, attr=cst.Name("enqueue"))
    if target.key_template is not None:
        key = key_expression(target.key_template, args, target.job.parameters)
        if isinstance(key, Skip):
            return key
        key_arg = cst.Arg(keyword=cst.Name("idempotency_key"), value=key, equal=KEYWORD_EQUAL)
        if "idempotency_key" in target.job.parameters:
            # The job has a parameter of that name: the key goes through .options() instead.
            options = cst.Call(
                func=cst.Attribute(value=func, attr=cst.Name("options")), args=[key_arg]
            )
            attr = cst.Attribute(value=options, attr=cst.Name("enqueue"))
        else:
            args = _append_arg(args, key_arg)
    if like is None:
        return cst.Call(func=attr, args=args)
    return like.with_changes(func=attr, args=args)


def _edited(arg: cst.Arg, target: Target) -> cst.Arg:
    written = code(arg.value).strip()
    for edit in target.edits:
        if edit.source.strip() == written:
            return arg.with_changes(value=cst.parse_expression(edit.replacement))
    return arg


def _append_arg(args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    if not args or isinstance(args[-1].comma, cst.MaybeSentinel):
        return [*args, new]
    # A trailing comma means the call is laid out one argument per line: keep that layout.
    sep = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [*args[:-1], args[-1].with_changes(comma=sep), new.with_changes(comma=args[-1].comma)]


def key_expression(
    template: str, args: Sequence[cst.Arg], params: list[str]
) -> cst.BaseExpression | Skip:
    """An f-string for ``template`` whose ``{param}`` placeholders are the call's argument expressions.

    A key function (``pkg.mod:func``) is called with the call's own arguments
    instead: ``func(args...)`` (the caller imports it).
    """
    function = key_function(template)
    if function is not None:
        if any(arg.star for arg in args):
            return Skip("idempotency key: arguments are unpacked with * or **")
        copied = ", ".join(code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in args)
        return cst.parse_expression(f"{function[1]}({copied})")
    bound = bind(args, params)
    if isinstance(bound, Skip):
        return bound
    missing = [p for p in _PLACEHOLDER.findall(template) if p not in bound]
    if missing:
        return Skip(f"idempotency key template {template!r}: no argument for {', '.join(missing)}")
    text = _PLACEHOLDER.sub(lambda mt: "{" + bound[mt.group(1)] + "}", template)
    quote = '"' if '"' not in text else "'"
    if quote in text or "\\" in text or "\n" in text:
        return Skip(
            f"idempotency key template {template!r}: argument expressions need quoting by hand"
        )
    return cst.parse_expression(
        f"f{quote}{text}{quote}" if "{" in text else f"{quote}{text}{quote}"
    )


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


def already_enqueues(stmt: cst.CSTNode, target: Target) -> bool:
    """A second run: the statement already calls ``<job>.enqueue(...)``."""
    for call in m.findall(stmt, m.Call(func=m.Attribute(attr=m.Name("enqueue")))):
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        if is_job_ref(call.func.value, target):
            return True
    return False


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


def enqueue_handoff(call: cst.Call, target: Target) -> cst.Call | Skip | None:
    """``fn.enqueue(a)`` for an asyncio hand-off of the job: a task, an executor, a thread."""
    method = (
        last_name(call.func) if not isinstance(call.func, cst.Attribute) else call.func.attr.value
    )
    positional = [a for a in call.args if a.keyword is None]
    if method in _TASKS and positional and isinstance(positional[0].value, cst.Call):
        coro = positional[0].value
        return (
            enqueue_call(coro.func, list(coro.args), target, like=coro)
            if is_job_ref(coro.func, target)
            else None
        )
    skip = _HANDED_AT.get(method or "")
    if skip is None or len(call.args) <= skip:
        return None
    found = unwrap(call.args[skip].value, target)
    if found is None:
        return None
    return enqueue_call(found[0], join_args(found[1], call.args[skip + 1 :]), target, like=call)
