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

A key is stored with the job (``job_keys``) and shown by the tooling, so it is
never made over a secret: a parameter named like one (``new_password``,
``token``, ``api_key``) is not named in a template, nor digested (``{*}`` of a
password is an unsalted hash of it); such a job gets ``<job>:{+}``, a fresh id
per call, which never merges two calls either. Nor is a key ever the *text* of
an object: ``{user}`` is ``str(user)`` (``User object (1)``, a name), ``{form}``
a form's HTML, neither names one unit of work; a job whose only parameter is an
object (``objects``: annotated with a class, read as one, or passed as a model
instance at a site) gets the digest, which covers the argument as the job
stores it (a model by its primary key).
"""

from __future__ import annotations

import re
from itertools import pairwise

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


# Words of a name that hold a secret: ``new_password``, ``reset_token``, ``apiKey``.
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "credential",
        "credentials",
        "passwords",
        "secrets",
        "tokens",
        "otp",
        "pin",
        "cvv",
        "cvc",
        "ssn",
    }
)
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")}
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def secret_name(name: str) -> bool:
    """Does ``name`` (a parameter, or an attribute path ``user.password``) hold a secret?"""
    for part in name.split("."):
        words = [w.lower() for w in _WORDS.findall(part)]
        if any(w in _SECRET_WORDS or "password" in w for w in words):
            return True
        if any(pair in _SECRET_PAIRS for pair in pairwise(words)):
            return True
    return False


def suggest_key(job: str, params: list[str], objects: frozenset[str] = frozenset()) -> str | None:
    """``<job>:{*}``, ``<job>:{only_parameter}``, ``<job>:{+}`` when a parameter holds a
    secret, or None for a job without parameters. ``objects``: parameters that hold an
    object, whose text is no key (the module docstring)."""
    arguments = [p for p in params if p not in _NOT_ARGUMENTS]
    if not arguments:
        return None
    if any(secret_name(p) for p in arguments):
        return call_key(job)
    if len(arguments) == 1 and arguments[0] not in objects:
        return f"{job}:{{{arguments[0]}}}"
    return f"{job}:{{{DIGEST_FIELD}}}"
