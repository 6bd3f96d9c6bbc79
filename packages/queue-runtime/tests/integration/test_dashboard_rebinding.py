"""``queue-runtime dashboard`` over real HTTP, sent the headers a browser or an attacker's page sends.

A DNS-rebinding page (``http://evil.example:PORT/`` whose name now points at
127.0.0.1) reaches a token-less dashboard on this machine with its own name
in ``Host`` and ``Origin``: it must read nothing and switch nothing. A form
posted from another site carries a foreign ``Origin``: refused with or
without a token. The token's redirect never leads off the dashboard, and a
NUL in a filter is a bad request, not an outage (issue 22, items 14 and 15).
The dashboard is a subprocess on a free port, on the test's own schema.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest

from queue_runtime import Settings
from queue_runtime.runtime import Runtime
from queue_runtime.testing import free_port, require, wait_until

pytest.importorskip("jinja2", reason="the dashboard's web extra is not installed")

pytestmark = [pytest.mark.pg, pytest.mark.redis]

TOKEN = "rebinding-test-token"
CHARGE = "tests.dashboard_rebinding.charge"
EVIL = "evil.example"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Browser:
    """Raw HTTP to one dashboard, keeping its cookies; every header is the caller's."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def send(self, method: str, path: str, headers: dict[str, str], body: str = "") -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            sent = dict(headers)
            if self.cookies:
                sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            conn.request(method, path, body.encode(), sent)  # a Host here replaces http.client's
            answer = conn.getresponse()
            reply = Reply(answer.status, dict(answer.getheaders()), answer.read().decode())
        finally:
            conn.close()
        for value in [v for k, v in answer.getheaders() if k.lower() == "set-cookie"]:
            self.cookies.update({k: m.value for k, m in SimpleCookie(value).items()})
        return reply

    def get(self, path: str, host: str, **headers: str) -> Reply:
        return self.send("GET", path, {"Host": host, **headers})

    def post(self, path: str, host: str, form: list[tuple[str, str]], **headers: str) -> Reply:
        kind = {"Content-Type": "application/x-www-form-urlencoded"}
        return self.send("POST", path, {"Host": host, **kind, **headers}, urlencode(form))


def csrf_of(reply: Reply) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', reply.body)
    assert found, f"the page renders a CSRF token: {reply.status} {reply.body[:200]}"
    return found.group(1)


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.json"
    jobs = [{"qualname": CHARGE, "idempotency": "non_idempotent", "confidence": "high"}]
    path.write_text(json.dumps({"root": str(tmp_path), "jobs": jobs}), encoding="utf-8")
    return path


Serve = Callable[..., int]


@pytest.fixture
def serve(settings: Settings, inventory: Path, tmp_path: Path) -> Iterator[Serve]:
    """``serve(*flags)``: a ``queue-runtime dashboard`` subprocess, answering; its port."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(*flags: str) -> int:
        port = free_port()
        command = [sys.executable, "-m", "queue_runtime.cli"]
        command += ["--database-url", settings.database_url or "", "--schema", settings.schema_name]
        command += [
            "--redis-url",
            settings.redis_url or "",
            "--redis-prefix",
            settings.redis_prefix,
        ]
        command += ["dashboard", "--port", str(port), "--inventory", str(inventory), *flags]
        log = tmp_path / f"dashboard-{len(procs)}.log"
        with log.open("wb") as out:
            procs.append(subprocess.Popen(command, stdout=out, stderr=out))
        wait_until(lambda: _answers(port, procs[-1], log), timeout=30, message="the dashboard")
        return port

    try:
        yield start
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def _answers(port: int, proc: subprocess.Popen[bytes], log: Path) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"the dashboard exited ({proc.returncode}): {log.read_text()}")
    try:
        reply = Browser(port).get("/", f"127.0.0.1:{port}", Authorization=f"Bearer {TOKEN}")
    except OSError:
        return False
    return reply.status == 200


def _rollout_form(csrf: str) -> list[tuple[str, str]]:
    return [("csrf", csrf), ("job", CHARGE), ("mode", "async"), ("why", "x"), ("force", "1")]


def test_a_rebinding_page_reads_nothing_from_the_tokenless_dashboard(serve: Serve) -> None:
    port = serve()
    attacker = Browser(port)
    for path in ("/", "/jobs", "/dead", "/migration", "/fragments/overview"):
        reply = attacker.get(path, f"{EVIL}:{port}", Origin=f"http://{EVIL}:{port}")
        assert reply.status == 400, (path, reply.status)
        assert "evil.example" in reply.body and f"http://127.0.0.1:{port}/" in reply.body
        assert 'name="csrf"' not in reply.body and CHARGE not in reply.body
    assert attacker.get("/", EVIL).status == 400  # no port, no Origin: the same
    for name in ("127.0.0.1", "localhost"):  # the bound address, and its name on this machine
        assert Browser(port).get("/migration", f"{name}:{port}").status == 200, name


def test_a_rebinding_page_cannot_switch_a_rollout(serve: Serve, runtime: Runtime) -> None:
    port = serve()
    local = Browser(port)
    csrf = csrf_of(local.get("/migration", f"127.0.0.1:{port}"))
    attacker = Browser(port, cookies=dict(local.cookies))  # even holding a valid session
    evil = {"Origin": f"http://{EVIL}:{port}"}
    refused = attacker.post("/migration/rollout", f"{EVIL}:{port}", _rollout_form(csrf), **evil)
    assert refused.status == 400
    assert runtime.gate_store.rollouts() == [] and runtime.gate_store.rollout_changes(CHARGE) == []


def test_a_write_from_a_foreign_origin_is_refused(serve: Serve, runtime: Runtime) -> None:
    port = serve()
    local = Browser(port)
    here = f"127.0.0.1:{port}"
    csrf = csrf_of(local.get("/migration", here))
    for origin in (f"http://{EVIL}", f"http://{EVIL}:{port}", "null", f"http://{here}.evil"):
        refused = local.post("/migration/rollout", here, _rollout_form(csrf), Origin=origin)
        assert refused.status == 403 and "Origin" in refused.body, origin
    assert runtime.gate_store.rollouts() == []
    done = local.post("/migration/rollout", here, _rollout_form(csrf), Origin=f"http://{here}")
    assert done.status == 303  # the dashboard's own page
    (stored,) = runtime.gate_store.rollouts()
    assert (stored.job, stored.label) == (CHARGE, "async")


def test_with_a_token_a_write_from_a_foreign_origin_is_refused(
    serve: Serve, runtime: Runtime
) -> None:
    port = serve(f"--token={TOKEN}")
    user = Browser(port)
    here = f"127.0.0.1:{port}"
    assert user.get(f"/?token={TOKEN}", here).status == 303
    csrf = csrf_of(user.get("/migration", here))
    form = _rollout_form(csrf)
    refused = user.post("/migration/rollout", here, form, Origin=f"https://{EVIL}")
    assert refused.status == 403 and runtime.gate_store.rollouts() == []
    assert user.post("/migration/rollout", here, form, Origin=f"http://{here}").status == 303
    assert [r.label for r in runtime.gate_store.rollouts()] == ["async"]
    assert user.get("/", f"dashboard.internal:{port}").status == 200  # the token is the gate


@pytest.mark.parametrize("path", ["/\\evil.example", "//evil.example", "/\\/evil.example"])
def test_the_token_redirect_stays_on_the_dashboard(serve: Serve, path: str) -> None:
    port = serve(f"--token={TOKEN}")
    reply = Browser(port).get(f"{path}?token={TOKEN}&state=dead", f"127.0.0.1:{port}")
    assert reply.status == 303
    location = reply.headers["Location"]
    assert location.startswith("/") and location[1:2] not in ("/", "\\"), location
    assert "evil.example" in location and "token" not in location and "state=dead" in location


def test_a_nul_in_a_filter_is_a_bad_request(serve: Serve, runtime: Runtime) -> None:
    port = serve()
    here = f"127.0.0.1:{port}"
    for path in ("/jobs?job=a%00b", "/jobs?state=dead&job=%00", "/dead?job=x%00"):
        reply = Browser(port).get(path, here)
        assert reply.status == 400 and "NUL" in reply.body, (path, reply.status)
    local = Browser(port)
    csrf = csrf_of(local.get("/migration", here))
    form = [("csrf", csrf), ("job", CHARGE), ("mode", "inline"), ("why", "a\x00b")]
    assert local.post("/migration/rollout", here, form).status == 400
    assert runtime.gate_store.rollouts() == []


@pytest.mark.browser
def test_in_chromium_a_rebound_name_gets_nothing(serve: Serve) -> None:
    """The real thing: Chromium resolves evil.example to 127.0.0.1 (what the attacker's DNS
    answers once the page is loaded) and opens the token-less dashboard under that name."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser extra")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        require("chromium not found: apt-get install chromium (what .ci/run does)")
    port = serve()
    rules = f"--host-resolver-rules=MAP {EVIL} 127.0.0.1"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=[rules])
        try:
            page = browser.new_page()
            rebound = page.goto(f"http://{EVIL}:{port}/migration")
            assert rebound is not None and rebound.status == 400
            assert page.locator('input[name="csrf"]').count() == 0
            assert CHARGE not in page.content()
            own = page.goto(f"http://127.0.0.1:{port}/migration")
            assert own is not None and own.status == 200 and CHARGE in page.content()
        finally:
            browser.close()
