"""A job that reads the request being served through a context proxy stays in-process.

Found by trying to break ``apply``: in a Flask view, ``notify_owner()`` whose body posts
``g.user_id``, ``audit_call()`` posting ``request.path`` and ``sync_profile()`` posting
Flask-Login's ``current_user.id`` were idempotent jobs and moved. Inline they ran as before;
once promoted, a worker, which serves no request, would raise "Working outside of request
context" (or, under a blank test request, post ``/`` and an anonymous user) on every call.
The scan now records each read of a request proxy (``REQUEST_READ``), through any function
the job calls, and apply leaves such a job, saying to pass the value as an argument; done
so, it moves. Flask's ``get_db()`` memo on ``g`` and a parameter named ``request`` are no
reads of the request.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from codemods import ApplyOptions, Status, plan_apply
from inventory import scan
from inventory.models import EffectKind, Idempotency
from tests.unit.inventory.fake_venv import write_tree

APP = """import flask
import requests
from crum import get_current_user
from flask import Flask, g, request, session
from flask_login import current_user

app = Flask(__name__)


def notify_owner():
    requests.put("https://hooks.example.com/owner", json={"user": g.user_id}, timeout=5)


def audit_call():
    requests.put("https://audit.example.com/log", json={"path": flask.request.path}, timeout=5)


def client_ip():
    return request.remote_addr


def audit_ip():
    requests.put("https://audit.example.com/ip", json={"ip": client_ip()}, timeout=5)


def sync_profile():
    requests.put("https://crm.example.com/users", json={"id": current_user.id}, timeout=5)


def remember_cart():
    requests.put("https://crm.example.com/cart", json=session.get("cart"), timeout=5)


def django_style():
    requests.put("https://crm.example.com/u", json={"id": get_current_user().pk}, timeout=5)


def get_db():
    if "db" not in g:
        g.db = object()
    return g.db


def store(user_id):
    requests.put("https://crm.example.com/db", json={"id": user_id, "db": str(get_db())}, timeout=5)


def with_param(request):
    requests.put("https://crm.example.com/p", json={"p": request.path}, timeout=5)


def plain(user_id):
    requests.put("https://crm.example.com/users", json={"id": user_id}, timeout=5)


@app.post("/orders")
def create_order():
    notify_owner()
    audit_call()
    audit_ip()
    sync_profile()
    remember_cart()
    django_style()
    store(1)
    with_param(object())
    plain(g.user_id)
    return "ok"
"""

READS = {
    "notify_owner": "flask.g.user_id",
    "audit_call": "flask.request",
    "audit_ip": "flask.request",  # through client_ip()
    "sync_profile": "flask_login.current_user",
    "remember_cart": "flask.session",
    "django_style": "crum.get_current_user",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("request_reads")
    write_tree(root, {"app.py": APP})
    return root


def test_each_read_of_the_request_is_an_effect_and_nothing_else_is(project: Path) -> None:
    inventory = scan(project, use_cache=False, write=False, jobs=1)
    reads = {
        job.qualname.removeprefix("app."): [
            e.api for e in job.effects if e.kind is EffectKind.REQUEST_READ
        ]
        for job in inventory.jobs
    }
    assert {name: apis for name, apis in reads.items() if apis} == {
        name: [api] for name, api in READS.items()
    }
    # reading the request repeats nothing: the verdict is the PUT's
    assert inventory.job("app.audit_call").idempotency is Idempotency.IDEMPOTENT
    chain = next(
        e.chain for e in inventory.job("app.audit_ip").effects if e.kind is EffectKind.REQUEST_READ
    )
    assert chain == ["app.audit_ip", "app.client_ip"]


def test_apply_leaves_them_and_moves_the_rest(project: Path) -> None:
    inventory = scan(project, use_cache=False, write=False, jobs=1)
    for options in (ApplyOptions(), ApplyOptions(jobs=tuple(f"app.{n}" for n in READS))):
        outcomes = {
            o.site.job.removeprefix("app."): o
            for o in plan_apply(project, inventory, options, scanner=None).outcomes
        }
        for name, api in READS.items():
            refused = outcomes[name]
            assert refused.status is Status.SKIPPED, name
            assert refused.reason.startswith(f"the job reads the request being served (`{api}`")
            assert "pass the value as an argument" in refused.reason
        assert "reached through app.audit_ip -> app.client_ip" in outcomes["audit_ip"].reason
        if not options.jobs:
            for name in ("store", "with_param", "plain"):
                assert outcomes[name].status is Status.REWRITTEN, name


def test_following_the_reason_moves_the_job(tmp_path: Path) -> None:
    """Read in the caller, passed as an argument: the job no longer reads the request."""
    followed = APP.replace(
        "def audit_call():\n"
        '    requests.put("https://audit.example.com/log", json={"path": flask.request.path}, '
        "timeout=5)\n",
        "def audit_call(path):\n"
        '    requests.put("https://audit.example.com/log", json={"path": path}, timeout=5)\n',
    ).replace("    audit_call()\n", "    audit_call(request.path)\n")
    assert followed.count("audit_call(") == 2 and "flask.request.path}" not in followed
    write_tree(tmp_path, {"app.py": followed})
    inventory = scan(tmp_path, use_cache=False, write=False, jobs=1)
    result = plan_apply(tmp_path, inventory, ApplyOptions(), scanner=None)
    moved = {o.site.job: o.status for o in result.outcomes}
    assert moved["app.audit_call"] is Status.REWRITTEN
    after = "".join(c.after for c in result.changes)
    assert "audit_call.enqueue(request.path)" in after
    ast.parse(after)


def test_a_nested_function_reads_for_itself() -> None:
    """The read inside a nested function is the nested function's, not its parent's."""
    from inventory._extract import extract_source

    summary = extract_source(
        textwrap.dedent(
            """
            from flask import request

            def outer():
                def inner():
                    return request.args
                return inner
            """
        ),
        "app.py",
        "app",
    )
    facts = {f.qualname: [x.target for x in f.facts] for f in summary.functions}
    assert facts == {"app.outer": [], "app.outer.<locals>.inner": ["flask.request"]}
