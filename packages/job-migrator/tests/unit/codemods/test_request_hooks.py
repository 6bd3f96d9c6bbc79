"""A job that acts on the request being served stays in-process.

Found by ``bench/apply_census.py``: invenio-accounts' ``user_logged_in`` receiver registers an
``@after_this_request`` function that regenerates the session (against session fixation),
and apply moved it; in a worker there is no request (with a server name, a blank one whose
response nobody gets), so the session would silently never be regenerated. ``flash()`` is
the same: the message goes to a session nobody reads. The scan records both as a
``request_hook`` effect (the decorator applied inside a function counts as the call it is),
and apply refuses the job whatever its verdict, naming the call.
"""

from __future__ import annotations

from pathlib import Path

from codemods import Status, plan_apply
from inventory import scan
from inventory._extract import extract_source
from inventory.models import EffectKind, Inventory

SIGNALS = """from flask import after_this_request, flash, session
from flask_login import user_logged_in


def login_listener(app, user):
    @after_this_request
    def regenerate(response):
        session.regenerate()
        return response


def greet(app, user):
    flash("welcome back")


user_logged_in.connect(login_listener)
user_logged_in.connect(greet)
"""


def test_a_decorator_applied_inside_a_function_is_its_call() -> None:
    summary = extract_source(SIGNALS, "app/signals.py", "app.signals")
    calls = {f.qualname: [c.target for c in f.calls] for f in summary.functions}

    assert calls["app.signals.login_listener"] == ["flask.after_this_request"]
    # the nested function itself calls nothing new; a module-level def is no call of anyone
    assert calls["app.signals.login_listener.<locals>.regenerate"] == ["flask.session.regenerate"]


def _scanned(root: Path, source: str) -> tuple[Inventory, dict[str, list[str]]]:
    """``app/signals.py`` scanned: the inventory, and each job's request hooks by name."""
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "signals.py").write_text(source)
    inventory = scan(root, use_cache=False, write=False)
    hooks = {
        j.qualname.rsplit(".", 1)[1]: [
            e.api for e in j.effects if e.kind is EffectKind.REQUEST_HOOK
        ]
        for j in inventory.jobs
    }
    return inventory, hooks


def test_a_job_acting_on_the_request_is_never_moved(tmp_path: Path) -> None:
    inventory, hooks = _scanned(tmp_path, SIGNALS)
    assert hooks["login_listener"] == ["flask.after_this_request"]
    assert hooks["greet"] == ["flask.flash"]

    outcomes = {
        o.site.job.rsplit(".", 1)[1]: o
        for o in plan_apply(tmp_path, inventory, scanner=None).outcomes
    }

    for name, call, line in (
        ("login_listener", "flask.after_this_request", 6),
        ("greet", "flask.flash", 13),
    ):
        refused = outcomes[name]
        assert refused.status is Status.SKIPPED, name
        assert refused.reason.startswith(
            f"the job acts on the request being served (`{call}` at app/signals.py:{line})"
        )
    assert not any(
        c.path == "app/signals.py" and "login_listener.enqueue" in c.after
        for c in plan_apply(tmp_path, inventory, scanner=None).changes
    )


SESSION = """from flask import session
from flask_login import user_loaded_from_cookie


def remember_mechanism(app, user=None):
    if user:
        session["login_mechanism"] = "remember_me"


def forget_credentials(app, user=None):
    session.pop("credentials_seen", None)


def mark_permanent(app, user=None):
    session.permanent = True


def read_only(app, user=None):
    print(session.get("login_mechanism"))


user_loaded_from_cookie.connect(remember_mechanism)
user_loaded_from_cookie.connect(forget_credentials)
user_loaded_from_cookie.connect(mark_permanent)
user_loaded_from_cookie.connect(read_only)
"""


def test_a_job_changing_the_requests_session_is_never_moved(tmp_path: Path) -> None:
    """Flask's ``session`` is the current request's (its changes go into that response's
    cookie): an item set, a method that changes it, an attribute set. A worker has no such
    request, so apply keeps each receiver in-process, naming where; reading it is nothing."""
    inventory, hooks = _scanned(tmp_path, SESSION)
    assert hooks["remember_mechanism"] == ["flask.session"]
    assert hooks["forget_credentials"] == ["flask.session.pop"]
    assert hooks["mark_permanent"] == ["flask.session"]
    assert hooks["read_only"] == []  # reading the session changes nothing
    outcomes = {
        o.site.job.rsplit(".", 1)[1]: o
        for o in plan_apply(tmp_path, inventory, scanner=None).outcomes
    }
    for name, call, line in (
        ("remember_mechanism", "flask.session", 7),
        ("forget_credentials", "flask.session.pop", 11),
        ("mark_permanent", "flask.session", 15),
    ):
        refused = outcomes[name]
        assert refused.status is Status.SKIPPED, (name, refused.reason)
        assert refused.reason.startswith(
            f"the job acts on the request being served (`{call}` at app/signals.py:{line})"
        ), refused.reason
