"""The idempotency key the scanner suggests for a job: one that never merges different work.

A key names one unit of work: when two calls that do different work share
a key, the execution guard answers the second with the first's result and
the second never runs (a second order's stock decrement, a mail to another
recipient). So, by default, the suggestion is ``<job>:{*}``: ``{*}`` is a
digest over every argument and the job's name (``queue_runtime.keys.digest_key``),
and two calls get one key only when every argument is equal.

A template that names parameters (``<job>:{user_id}``) is suggested only when
it omits nothing the analyzer cannot show to be irrelevant, and what counts as
*shown* is deliberately narrow: ``self`` / ``cls`` (not arguments of the job)
and nothing else. Reading a parameter's name (``subject``, ``from_email``) or
finding no use of it in the traced calls shows nothing: a value can change the
effect through a branch, a format string or a callee the trace did not reach.
So a named template is suggested only for a job with exactly one parameter,
where ``{parameter}`` is that whole argument, and it reads better than a digest.

A job without parameters gets no suggestion: every call is the same call, a
key of it would be fieldless (the config validator rejects those) and the job
would run once, ever. It needs an input that names one unit of work first.
"""

from __future__ import annotations

DIGEST_FIELD = "*"  # ``{*}`` in a key template: the digest of every argument
CALL_FIELD = "+"  # ``{+}``: a fresh id made at each call (queue_runtime.keys), kept by its retries


def call_key(job: str) -> str:
    """``<job>:{+}``: the key of a notification, made for each call at the enqueue site.

    A repeated request is different work: a key over the arguments (the same user asking
    twice, a project created then updated) would answer the second call with the first's
    result and drop its mail. A key made per call and stored with the job still stops a
    redelivery or a retry of that call from sending twice, and never merges two requests.
    """
    return f"{job}:{{{CALL_FIELD}}}"


_NOT_ARGUMENTS = frozenset({"self", "cls"})


def suggest_key(job: str, params: list[str]) -> str | None:
    """``<job>:{*}``, ``<job>:{only_parameter}``, or None for a job without parameters."""
    arguments = [p for p in params if p not in _NOT_ARGUMENTS]
    if not arguments:
        return None
    if len(arguments) == 1:
        return f"{job}:{{{arguments[0]}}}"
    return f"{job}:{{{DIGEST_FIELD}}}"
