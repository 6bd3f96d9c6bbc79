"""A local bound to a partial or to a choice of callables: calling it calls what it holds.

``log = partial(report, hass, domain)`` then ``log("failed")`` calls ``report(hass, domain,
"failed")`` (functools.partial: called, it "behaves like func called with the positional
arguments args and keyword arguments keywords", the call's own arguments appended);
``write = atomic if safe else plain`` then ``write(path)`` calls one of the two (a
conditional expression evaluates to one of its operands). The census found both idioms
leaving jobs ``unknown`` as "dynamic dispatch" in 13 packages (homeassistant's setup logging
through a local partial; sqlalchemy's ``asc if ascending else desc``, ``StringIO if text else
BytesIO``, ``logger.debug if optional else logger.error``...). Each callable is now read as
if called by name: a project function's body is followed, a library call is looked up in
the catalogue. A branch of unknown origin (a parameter, a call's result, a lambda), a local
bound by more than one statement (a branch, a loop's next iteration or a closure's
``nonlocal`` may rebind it), or a partial of something that is not a named callable stays a
gap.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory
from tests.unit.inventory.conftest import Verdicts, thread_views

JOBS = """import logging
from functools import partial

import requests

logger = logging.getLogger(__name__)


def report(domain, message):
    logger.error("%s: %s", domain, message)


def notify(url, message):
    requests.post(url, json={"m": message})


def fetch(url):
    return requests.get(url, timeout=5)


def head(url):
    return requests.head(url, timeout=5)


def logged(domain):
    log = partial(report, domain)
    log("setup failed")


def posted(url):
    send = partial(notify, url)
    send("done")


def either_read(url, quick=False):
    read = head if quick else fetch
    read(url)


def either_write(url, quick=False):
    call = fetch if quick else notify
    call(url, "x")


def nested_read(url, mode):
    read = head if mode == 1 else fetch if mode == 2 else head
    read(url)


def either_log(message, optional=True):
    say = logger.debug if optional else logger.error
    say(message)


def rebound(url, hook):
    read = head if url else fetch
    read = hook
    read(url)


def from_parameter(url, hook):
    read = hook if url else fetch
    read(url)


def with_lambda(url):
    read = fetch if url else (lambda u: None)
    read(url)


def rebound_in_branch(url, hook, quick=False):
    read = head if quick else fetch
    if url.startswith("x"):
        read = hook
    read(url)


def rebound_in_loop(url, hooks):
    read = head if url else fetch
    for hook in hooks:
        read(url)
        read = hook


def rebound_by_closure(url, hook):
    read = head if url else fetch

    def swap():
        nonlocal read
        read = hook

    swap()
    read(url)
"""
NAMES = (
    "logged",
    "posted",
    "either_read",
    "either_write",
    "nested_read",
    "either_log",
    "rebound",
    "from_parameter",
    "with_lambda",
    "rebound_in_branch",
    "rebound_in_loop",
    "rebound_by_closure",
)
VIEWS = thread_views(NAMES, "(request.GET['a'],)")
Scanner = Callable[[dict[str, str]], Inventory]


def test_a_local_partial_calls_what_it_wraps(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS)
    assert verdicts["logged"] == Idempotency.IDEMPOTENT  # report's log line, read from its body
    assert verdicts["posted"] == Idempotency.NON_IDEMPOTENT  # notify's unkeyed POST


def test_a_choice_of_callables_is_each_of_them(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS)
    assert verdicts["either_read"] == Idempotency.IDEMPOTENT  # a GET or a HEAD
    assert verdicts["nested_read"] == Idempotency.IDEMPOTENT
    assert verdicts["either_log"] == Idempotency.IDEMPOTENT  # a library logger's methods
    # one of the two POSTs: the job is what its worst choice does
    assert verdicts["either_write"] == Idempotency.NON_IDEMPOTENT


def test_what_is_not_known_here_stays_a_gap(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS)
    assert verdicts["rebound"] == Idempotency.UNKNOWN  # rebound to a parameter's value
    assert verdicts["from_parameter"] == Idempotency.UNKNOWN  # one branch is a parameter
    assert verdicts["with_lambda"] == Idempotency.UNKNOWN  # one branch is a lambda
    # bound again elsewhere in the function: a read may see the other value (the next
    # iteration of a loop reads what the previous one bound)
    for name in ("rebound_in_branch", "rebound_in_loop", "rebound_by_closure"):
        assert verdicts[name] == Idempotency.UNKNOWN, name


def test_the_chosen_callables_effects_are_the_evidence(scan_project: Scanner) -> None:
    inventory = scan_project({"app/__init__.py": "", "app/jobs.py": JOBS, "app/views.py": VIEWS})
    job = next(j for j in inventory.jobs if j.qualname == "app.jobs.either_write")
    kinds = {(e.kind, e.api) for e in job.effects}
    assert (EffectKind.HTTP_POST, "requests.post") in kinds
    assert (EffectKind.HTTP_GET, "requests.get") in kinds
    assert not any(e.kind is EffectKind.DYNAMIC_CALL for e in job.effects)
