"""Django's mail call -> the drop-in that delivers it from a worker (``codemods._mail``).

``send_mail(a, b, c, d, ...)``   -> ``django_mail.send_mail(a, b, c, d, ...)``
``mail.send_mail(...)``          -> ``django_mail.send_mail(...)``
``EmailMessage(...).send(f)``    -> ``django_mail.send(EmailMessage(...), f)``
``msg.send(fail_silently=True)`` -> ``django_mail.send(msg, fail_silently=True)``

The arguments are the original nodes, untouched: the drop-ins take Django's own
signatures. ``from queue_runtime import django_mail`` is added; an import of
``send_mail`` nothing uses any more is removed.
"""

from __future__ import annotations

import libcst as cst

from codemods._mail import MODULE, NAME, drop_in
from codemods._rewrites.enqueue import join_args
from codemods._syntax import dotted, replace_expression, statement_call
from codemods._types import Block, Edit, Import, Skip, Target

_ADD = (Import(MODULE, NAME),)
_REMOVES = (Import("django.core.mail", "send_mail"), Import("django.core", "mail"))


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None or not isinstance(stmt, cst.SimpleStatementLine):
        return None
    if isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Await):
        return Skip("an awaited mail call: not Django's synchronous API")
    which = drop_in(target.site)
    new = _send_mail(call) if which == "send_mail" else _send(call)
    if new is None:
        return None
    return Edit({index: [replace_expression(stmt, new)]}, adds=_ADD, removes=_REMOVES)


def _send_mail(call: cst.Call) -> cst.Call | None:
    # The scan resolved this call to Django's send_mail, under whatever name it was imported
    # (``from django.core.mail import send_mail as django_send_mail``): a plain name is enough.
    if dotted(call.func) is None:
        return None
    return call.with_changes(func=_attr("send_mail"))


def _send(call: cst.Call) -> cst.Call | None:
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "send":
        return None
    message = cst.Arg(value=func.value)
    return call.with_changes(func=_attr("send"), args=join_args([message], list(call.args)))


def _attr(name: str) -> cst.Attribute:
    return cst.Attribute(value=cst.Name(NAME), attr=cst.Name(name))
