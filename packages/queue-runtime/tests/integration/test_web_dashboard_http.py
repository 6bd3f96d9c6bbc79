"""The web dashboard over HTTP (WSGI and ASGI), against the real PostgreSQL and Redis.

No browser here (the browser tests drive Chromium): a small WSGI client keeps
cookies like a browser does, and the assertions read the markup contract
(ids, data attributes) of docs/dashboard.md.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from wsgiref.util import setup_testing_defaults

import pytest

from queue_runtime import Mode, Settings, configure
from queue_runtime.pg import dashboard as dashboard_queries
from queue_runtime.runtime import Runtime
from queue_runtime.shadow_model import ShadowDelta, ShadowFailure
from queue_runtime.store import Completion, Failure, JobStatus, NewJob
from queue_runtime.testing import free_port, memory_stores, wait_until
from queue_runtime.web import make_asgi_app, make_wsgi_app
from queue_runtime.web._http import WsgiApp

pytestmark = [pytest.mark.pg, pytest.mark.redis]

TOKEN = "s3cret-token"
CHARGE = "tests.web_dashboard.charge"


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: str

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k.lower() == name.lower()), "")


@dataclass
class Client:
    """A WSGI client that keeps cookies, as a browser would."""

    app: WsgiApp
    root: str = ""
    cookies: dict[str, str] = field(default_factory=dict)

    def get(self, path: str, **headers: str) -> Reply:
        return self.call("GET", path, b"", headers)

    def post(self, path: str, data: list[tuple[str, str]], **headers: str) -> Reply:
        body = urlencode(data).encode()
        headers = {"CONTENT_TYPE": "application/x-www-form-urlencoded", **headers}
        return self.call("POST", path, body, headers)

    def call(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        path, _, query = path.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": self.root,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
        }
        if self.cookies:
            environ["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        environ.update({k if k == "CONTENT_TYPE" else f"HTTP_{k}": v for k, v in headers.items()})
        setup_testing_defaults(environ)
        started: list[Any] = []
        chunks = self.app(environ, lambda status, hdrs, *_: started.extend([status, hdrs]))
        reply = Reply(int(started[0].split()[0]), started[1], b"".join(chunks).decode())
        for name, value in reply.headers:
            if name.lower() == "set-cookie":
                cookie = SimpleCookie(value)
                self.cookies.update({k: m.value for k, m in cookie.items()})
        return reply

    def csrf(self, page: str = "/dead") -> str:
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', self.get(page).body)
        assert found, "the page renders the CSRF token"
        return found.group(1)


def dead_job(rt: Runtime, args: dict[str, Any] | None = None, name: str = CHARGE) -> int:
    (job_id,) = rt.store.enqueue_many([NewJob(name, "default", args or {"n": 1})])
    claimed = next(c for c in rt.store.claim("default", 100, "w1") if c.id == job_id)
    error = f"ValueError: boom\nTraceback (most recent call last):\n  line {job_id}"
    rt.store.fail(Failure(claimed.id, claimed.attempt, "ValueError: boom", error, retry_at=None))
    return job_id


def ids_in(body: str, table: str) -> list[int]:
    section = body.split(f'<table id="{table}">', 1)[1].split("</table>", 1)[0]
    return [int(i) for i in re.findall(r'data-job-id="(\d+)"', section)]


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@pytest.fixture(params=list(Backend), ids=[b.value for b in Backend])
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """The configured Runtime on PostgreSQL and Redis, or on the memory stores: the
    dashboard reads through its store protocol, and answers alike on both."""
    if request.param is Backend.PG:
        rt = configure(request.getfixturevalue("settings"))
    else:
        settings = Settings(mode=Mode.QUEUE)
        rt = configure(settings, stores=memory_stores(settings))
    try:
        yield rt
    finally:
        rt.close()


@pytest.fixture
def inventory(tmp_path: Path) -> str:
    path = tmp_path / "inventory.json"
    jobs = [
        {"qualname": CHARGE, "idempotency": "non_idempotent", "confidence": "high"},
        {"qualname": "tests.web_dashboard.mail", "idempotency": "idempotent"},
    ]
    path.write_text(json.dumps({"root": str(tmp_path), "jobs": jobs}), encoding="utf-8")
    return str(path)


@pytest.fixture
def client(runtime: Runtime, inventory: str) -> Iterator[Client]:
    app = make_wsgi_app(runtime, token={"alice": TOKEN}, inventory=inventory)
    c = Client(app)
    assert c.get(f"/?token={TOKEN}").status == 303
    yield c
    app.close()  # type: ignore[attr-defined]


def test_every_page_answers(client: Client, runtime: Runtime) -> None:
    dead = dead_job(runtime)
    runtime.store.enqueue_many([NewJob("tests.web_dashboard.mail", "default", {"to": "x"})])
    for path in (
        "/",
        "/fragments/overview",
        "/jobs",
        f"/jobs/{dead}",
        "/dead",
        "/migration",
        "/workers",
        "/periodic",
        "/jobs?state=dead",
        "/jobs?state=queued&job=x",
    ):
        reply = client.get(path)
        assert reply.status == 200, (path, reply.body[:300])
    overview = client.get("/").body
    assert '<tr data-pool="default">' in overview
    for cell in ("depth", "scheduled", "running", "lag", "throughput", "dead"):
        assert f'class="{cell} num"' in overview
    assert '<svg id="chart-throughput"' in overview and '<svg id="chart-lag"' in overview
    fragment = client.get("/fragments/overview").body
    assert '<table id="pools">' in fragment and "<nav>" not in fragment
    job = client.get(f"/jobs/{dead}").body
    assert 'id="job-state">dead<' in job and '<table id="attempts">' in job
    assert '<pre class="traceback"' in job and "Traceback (most recent call last)" in job


def test_replay_queues_the_dead_job_again_after_a_confirmation(
    client: Client, runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = dead_job(runtime), dead_job(runtime)
    assert ids_in(client.get("/dead").body, "dead") == [second, first]
    csrf = client.csrf()
    confirm = client.post("/dead/replay", [("csrf", csrf), ("ids", str(first))])
    assert confirm.status == 200 and '<button type="submit" id="confirm"' in confirm.body
    assert runtime.store.get(first).status is JobStatus.DEAD  # type: ignore[union-attr]
    with caplog.at_level("INFO", logger="queue_runtime.web"):
        done = client.post("/dead/replay", [("csrf", csrf), ("ids", str(first)), ("confirm", "1")])
    assert done.status == 303 and done.header("Location") == "/dead?flash=replayed&n=1"
    assert "alice replayed 1 dead job(s)" in caplog.text
    page = client.get(done.header("Location")).body
    assert '<div class="flash">1 dead job(s) replayed</div>' in page
    assert ids_in(page, "dead") == [second]
    queued = client.get("/jobs?state=queued").body
    (new_id,) = ids_in(queued, "jobs")
    replayed = runtime.store.get(new_id)
    assert replayed is not None and replayed.status is JobStatus.QUEUED
    assert replayed.name == CHARGE


def test_purge_removes_the_dead_job(client: Client, runtime: Runtime) -> None:
    keep, gone = dead_job(runtime), dead_job(runtime)
    csrf = client.csrf()
    done = client.post("/dead/purge", [("csrf", csrf), ("ids", str(gone)), ("confirm", "1")])
    assert done.status == 303 and "flash=purged&n=1" in done.header("Location")
    assert runtime.store.get(gone) is None
    assert ids_in(client.get("/dead").body, "dead") == [keep]
    nothing = client.post("/dead/purge", [("csrf", csrf), ("confirm", "1")])
    assert nothing.status == 400 and runtime.store.get(keep) is not None


def test_rollout_change_is_recorded_with_who_and_why(client: Client, runtime: Runtime) -> None:
    runtime.gate_store.insert_certification(CHARGE, "f" * 40, {"p99_ms": 12.5}, who="bob")
    page = client.get("/migration").body
    row = page.split(f'<tr data-job="{CHARGE}">', 1)[1].split("</tr>", 1)[0]
    assert '<td class="verdict">non_idempotent</td>' in row
    assert '<td class="phase">phase 3</td>' in row
    assert '<td class="certified">yes</td>' in row and '<td class="certified-by">bob</td>' in row
    csrf = client.csrf("/migration")
    no_why = client.post("/migration/rollout", [("csrf", csrf), ("job", CHARGE), ("mode", "25%")])
    assert no_why.status == 400 and runtime.gate_store.rollouts() == []
    form = [("csrf", csrf), ("job", CHARGE), ("mode", "25%"), ("why", "canary <b>1</b>")]
    refused = client.post("/migration/rollout", form)  # no shadow evidence yet
    assert refused.status == 409 and "no shadow evidence" in refused.body
    runtime.gate_store.add_shadow([ShadowDelta(CHARGE, "f" * 40, checked=100)])
    done = client.post("/migration/rollout", form)
    assert done.status == 303
    (stored,) = runtime.gate_store.rollouts()
    assert (stored.job, stored.label, stored.updated_by) == (CHARGE, "25%", "alice")
    (change,) = runtime.gate_store.rollout_changes(CHARGE)
    assert (change.changed_by, change.reason, change.after_label) == (
        "alice",
        "canary <b>1</b>",
        "25%",
    )
    page = client.get(done.header("Location")).body
    assert f'<div class="flash">rollout of {CHARGE} is now 25%</div>' in page
    assert '<td class="rollout">25%</td>' in page
    unknown = client.post("/migration/rollout", [*form[:1], ("job", "nope"), *form[2:]])
    assert unknown.status == 400


def test_post_without_token_is_401_without_csrf_403(runtime: Runtime, client: Client) -> None:
    job = dead_job(runtime)
    csrf = client.csrf()
    anonymous = Client(client.app, cookies={"qr_session": client.cookies["qr_session"]})
    assert anonymous.get("/").status == 401
    assert anonymous.get(f"/?token=wrong{TOKEN}").status == 401
    form = [("csrf", csrf), ("ids", str(job)), ("confirm", "1")]
    assert anonymous.post("/dead/purge", form).status == 401
    bearer = anonymous.post(
        "/dead/purge", [("ids", str(job)), ("confirm", "1")], AUTHORIZATION=f"Bearer {TOKEN}"
    )
    assert bearer.status == 403  # the token alone is not enough: no CSRF token
    assert client.post("/dead/purge", [("csrf", "0" * 64), *form[1:]]).status == 403
    assert runtime.store.get(job) is not None  # nothing was purged
    assert anonymous.get("/", AUTHORIZATION=f"Bearer {TOKEN}").status == 200
    cookie = client.get(f"/?token={TOKEN}").header("Set-Cookie")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie


def test_read_only_renders_no_forms_and_refuses_posts(runtime: Runtime, inventory: str) -> None:
    job = dead_job(runtime)
    c = Client(make_wsgi_app(runtime, read_only=True, inventory=inventory))
    for path in ("/dead", "/migration", f"/jobs/{job}"):
        body = c.get(path).body
        assert '<body data-read-only="1"' in body and 'method="post"' not in body, path
    writer = Client(make_wsgi_app(runtime, inventory=inventory))
    csrf = writer.csrf()
    c.cookies = dict(writer.cookies)
    form = [("csrf", csrf), ("ids", str(job)), ("confirm", "1")]
    assert c.post("/dead/purge", form).status == 403
    assert (
        c.post(
            "/migration/rollout", [("csrf", csrf), ("job", CHARGE), ("mode", "async"), ("why", "x")]
        ).status
        == 403
    )
    assert runtime.store.get(job) is not None and runtime.gate_store.rollouts() == []


def test_arguments_with_markup_render_as_text(client: Client, runtime: Runtime) -> None:
    job = dead_job(runtime, {"note": "<script>alert('x')</script>"})
    for path in (f"/jobs/{job}", "/dead"):
        body = client.get(path).body
        assert "<script>alert" not in body, path
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in client.get(f"/jobs/{job}").body


def test_keyset_pages_return_every_job_exactly_once(
    client: Client, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dashboard_queries, "WINDOW", 45)  # a name filter searches 45 ids a page
    dead = dead_job(runtime)  # first: it claims what is queued
    mail = "tests.web_dashboard.mail"
    batch = [NewJob(CHARGE if n % 4 else mail, "default", {"n": n}) for n in range(160)]
    ids = runtime.store.enqueue_many(batch)
    charges = {i for i, job in zip(ids, batch, strict=True) if job.name == CHARGE}
    claimed = runtime.store.claim("default", 40, "w1")
    runtime.store.complete_many([Completion(c.id, c.attempt) for c in claimed[:30]])
    for query, expected in (
        ("", {*ids, dead}),
        ("state=queued", set(ids) - {c.id for c in claimed}),
        (f"job={CHARGE}", {*charges, dead}),  # sparse: windows of 45 ids
        ("state=succeeded", {c.id for c in claimed[:30]}),
        ("job=never.ran", set()),
    ):
        seen: list[int] = []
        path: str | None = f"/jobs?{query}"
        while path is not None:
            body = client.get(path).body
            seen += ids_in(body, "jobs")
            found = re.search(r'<a id="next-page" href="([^"]+)"', body)
            path = found.group(1).replace("&amp;", "&") if found else None
        assert len(seen) == len(set(seen)) and set(seen) == expected, query
        assert seen == sorted(seen, reverse=True)


def test_links_honour_the_mount_point_in_wsgi_and_asgi(runtime: Runtime) -> None:
    mounted = Client(make_wsgi_app(runtime), root="/queue")
    first = mounted.get("/jobs")
    assert 'href="/queue/dead"' in first.body and 'action="/queue/jobs"' in first.body
    assert "Path=/queue;" in first.header("Set-Cookie")
    asgi = make_asgi_app(runtime)
    page = asgi_call(asgi, "GET", "/queue/dead", b"", [])
    assert page[0] == 200 and 'href="/queue/jobs"' in page[2]
    cookie = page[1]["set-cookie"].split(";")[0]
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page[2])
    assert csrf is not None
    job = dead_job(runtime)
    form = urlencode({"csrf": csrf.group(1), "ids": job, "confirm": "1"}).encode()
    headers = [
        (b"cookie", cookie.encode()),
        (b"content-type", b"application/x-www-form-urlencoded"),
    ]
    purged = asgi_call(asgi, "POST", "/queue/dead/purge", form, headers)
    assert purged[0] == 303 and purged[1]["location"].startswith("/queue/dead?flash=purged")
    assert runtime.store.get(job) is None
    refused = asgi_call(asgi, "POST", "/queue/dead/purge", form, headers[1:])  # no session
    assert refused[0] == 403


def asgi_call(
    app: Any, method: str, path: str, body: bytes, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[str, str], str]:
    """One request through the ASGI app, its body in two chunks as servers may send it."""
    chunks = [body[: len(body) // 2], body[len(body) // 2 :]]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": chunks.pop(0), "more_body": bool(chunks)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": "/queue",
        "query_string": b"",
        "headers": [(b"host", b"x"), *headers],
    }
    asyncio.run(app(scope, receive, send))
    start, answer = sent
    found = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], found, answer["body"].decode()


def test_standalone_refuses_a_public_address_without_token(settings: Settings) -> None:
    env = {**os.environ, "QUEUE_RUNTIME_DATABASE_URL": settings.database_url or ""}
    env.pop("QUEUE_RUNTIME_DASHBOARD_TOKEN", None)
    cmd = [sys.executable, "-m", "queue_runtime.cli", "--schema", settings.schema_name]
    out = subprocess.run(
        [*cmd, "dashboard", "--host", "0.0.0.0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "without a token" in out.stderr


def test_standalone_serves_with_a_token(settings: Settings) -> None:
    port = free_port()
    env = {
        **os.environ,
        "QUEUE_RUNTIME_DATABASE_URL": settings.database_url or "",
        "QUEUE_RUNTIME_REDIS_URL": settings.redis_url or "",
        "QUEUE_RUNTIME_DASHBOARD_TOKEN": TOKEN,
    }
    cmd = [
        sys.executable,
        "-m",
        "queue_runtime.cli",
        "--schema",
        settings.schema_name,
        "dashboard",
        "--port",
        str(port),
    ]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_until(lambda: _status(url) != 0, timeout=30, message="the dashboard listens")
        assert _status(url) == 401
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200 and b'<table id="pools">' in reply.read()
    finally:
        server.terminate()
        server.communicate(timeout=30)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


@pytest.mark.parametrize("runtime", [Backend.PG], ids=["pg"], indirect=True)
def test_the_dashboards_connections_run_without_jit(runtime: Runtime) -> None:
    """Set once per connection (a connection parameter), not by a statement before each read;
    the app's own pool keeps the server's setting."""
    queries = dashboard_queries.PgDashboard.open(runtime.settings)
    try:
        for _ in range(3):  # every read, on whichever pooled connection it gets
            assert queries._all("SELECT current_setting('jit')") == [("off",)]
    finally:
        queries.close()
    import psycopg

    jit = "SELECT current_setting('jit')"
    with psycopg.connect(runtime.settings.database_url or "") as plain:
        server = plain.execute(jit).fetchone()
    with runtime.store._pool.connection() as conn:  # type: ignore[attr-defined]
        assert conn.execute(jit).fetchone() == server


def test_the_job_page_shows_the_jobs_shadow_evidence(client: Client, runtime: Runtime) -> None:
    job = dead_job(runtime)
    assert "shadow evidence: none; not promotable" in client.get(f"/jobs/{job}").body
    failure = ShadowFailure("order", "builtins.object", "no codec covers it", fallback=True)
    delta = ShadowDelta(CHARGE, "abc123", checked=7, unencodable=1, examples=(failure,))
    runtime.gate_store.add_shadow([delta])
    page = client.get(f"/jobs/{job}").body
    assert "shadow evidence: 7 checked, 0 failed, 1 unencodable; not promotable" in page
    assert '<table id="shadow-examples">' in page and "unencodable (ran as before)" in page
    assert "no codec covers it" in page and "code abc123" in page


def test_a_forced_promotion_from_the_dashboard_records_what_it_overrode(
    client: Client, runtime: Runtime
) -> None:
    failure = ShadowFailure("order", "builtins.object", "no codec covers it", fallback=True)
    runtime.gate_store.add_shadow([ShadowDelta(CHARGE, "f" * 40, 150, 0, 1, (failure,))])
    csrf = client.csrf("/migration")
    form = [("csrf", csrf), ("job", CHARGE), ("mode", "async"), ("why", "hotfix")]
    refused = client.post("/migration/rollout", form)
    assert refused.status == 409 and "1 unencodable fallback(s)" in refused.body
    assert runtime.gate_store.rollouts() == []
    assert client.post("/migration/rollout", [*form, ("force", "1")]).status == 303
    (change,) = runtime.gate_store.rollout_changes(CHARGE)
    assert (change.changed_by, change.after_label) == ("alice", "async")
    assert change.reason == (
        "forced past the shadow evidence (150 checked, 0 failed, 1 unencodable, 100 needed);"
        " reason: hotfix"
    )
    inline = [("csrf", csrf), ("job", CHARGE), ("mode", "inline"), ("why", "back")]
    assert client.post("/migration/rollout", inline).status == 303  # inline: never refused
