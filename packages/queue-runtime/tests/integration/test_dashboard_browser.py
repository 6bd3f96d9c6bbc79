"""The dashboard in a real headless Chromium, against real PostgreSQL and Redis.

``queue-runtime dashboard`` runs as a subprocess on a free port with a token,
on the test's own schema and Redis prefix; a real worker
(:class:`~queue_runtime.testing.WorkerSpawner`) runs the jobs of
``dashboard_browser_app``. Playwright drives Debian's ``/usr/bin/chromium``
(never a downloaded browser). The tests need the ``web`` and ``browser``
extras (skipped without them, as in the runtime-alone CI venv); a missing
Chromium skips them locally and fails them under ``MIGRATOR_REQUIRE_SERVICES``.

``DASHBOARD_SCREENSHOTS=DIR`` saves a PNG of every page as
``DIR/dashboard-<page>.png`` (docs/images holds the ones docs/dashboard.md shows).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from queue_runtime import JobStatus, Settings
from queue_runtime.config import RolloutMode
from queue_runtime.runtime import Runtime
from queue_runtime.shadow_model import ShadowDelta
from queue_runtime.store import NewJob
from queue_runtime.testing import free_port, require, wait_until
from tests.integration.workers import ROOT, Spawner

pytest.importorskip("jinja2", reason="the dashboard's web extra is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (the browser extra)"
)

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

APP = "tests.integration.dashboard_browser_app"
DELIVER = f"{APP}.deliver"
DIGEST = f"{APP}.hourly_digest"
LINGER = f"{APP}.linger"
TOKEN = "browser-test-token"
SCRIPT = "<script>alert('owned')</script>"
Dashboard = Callable[..., str]


def chromium() -> str:
    """Debian's Chromium (``apt-get install chromium``), or CHROMIUM if set."""
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(chromium()).exists():
        require("chromium not found: apt-get install chromium (what .ci/run does)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    """The inventory JSON ``migrator scan`` writes, for the two jobs of the app."""
    jobs = [
        {"qualname": DELIVER, "idempotency": "needs_key", "confidence": "high"},
        {"qualname": DIGEST, "idempotency": "idempotent", "confidence": "high"},
        {"qualname": LINGER, "idempotency": "non_idempotent", "confidence": "high"},
    ]
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"root": str(tmp_path), "jobs": jobs, "sites": []}))
    return path


@pytest.fixture
def dashboard(settings: Settings, inventory: Path, tmp_path: Path) -> Iterator[Dashboard]:
    """``start(*flags)``: a ``queue-runtime dashboard`` subprocess, answering; its base URL.
    With ``--tokens FILE`` among the flags, no ``--token`` (the file must hold TOKEN)."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(*flags: str) -> str:
        port = free_port()
        command = [sys.executable, "-m", "queue_runtime.cli", *connection_flags(settings)]
        command += ["dashboard", "--port", str(port)]
        command += [] if "--tokens" in flags else [f"--token={TOKEN}"]
        command += ["--inventory", str(inventory), "--app", APP, *flags]
        log = tmp_path / f"dashboard-{len(procs)}.log"
        with log.open("wb") as out:
            procs.append(subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=out))
        url = f"http://127.0.0.1:{port}"
        wait_until(
            lambda: answers(url, procs[-1], log), timeout=30, message="the dashboard to answer"
        )
        return url

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


def connection_flags(settings: Settings) -> list[str]:
    return [
        *("--database-url", settings.database_url or "", "--schema", settings.schema_name),
        *("--redis-url", settings.redis_url or "", "--redis-prefix", settings.redis_prefix),
    ]


def answers(url: str, proc: subprocess.Popen[bytes], log: Path) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"the dashboard exited ({proc.returncode}): {log.read_text()}")
    request = urllib.request.Request(url + "/", headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[Spawner]:
    spawned = Spawner(tmp_path, APP)
    try:
        yield spawned
    finally:
        spawned.stop_all()


@dataclass
class Tab:
    """A browser page on one dashboard, and every dialog a script opened in it."""

    page: Any
    base: str
    dialogs: list[str] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.page, name)


@pytest.fixture
def page(browser: Any, dashboard: Dashboard) -> Iterator[Tab]:
    """A page of a fresh browser context, signed in (``/?token=``) to a fresh dashboard."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(10_000)
    tab = Tab(context.new_page(), dashboard())

    def opened(dialog: Any) -> None:
        tab.dialogs.append(dialog.message)
        dialog.dismiss()

    tab.page.on("dialog", opened)
    response = tab.goto(f"{tab.base}/?token={TOKEN}")
    assert response is not None and response.status == 200
    try:
        yield tab
    finally:
        context.close()


def visit(page: Tab, path: str, shot: str | None = None) -> Any:
    response = page.goto(page.base + path)
    assert response is not None and response.status == 200, (path, response and response.status)
    if shot and os.environ.get("DASHBOARD_SCREENSHOTS"):
        folder = Path(os.environ["DASHBOARD_SCREENSHOTS"])
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"dashboard-{shot}.png"), full_page=True)
    return response


def current_fingerprint(job: str) -> str:
    """The job's code fingerprint, computed in a process of its own: importing the app here
    would register its periodic job in every in-process worker of the test session."""
    module, name = job.rsplit(".", 1)
    code = (
        "from queue_runtime.gate.fingerprint import fingerprint\n"
        f"from {module} import {name}\nprint(fingerprint({name}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def dead_letter(runtime: Runtime, flag: Path, note: str = "") -> int:
    """A ``deliver`` job the (running) worker dead-letters: its flag file is missing."""
    job_id = runtime.store.enqueue(
        NewJob(name=DELIVER, pool="batch", args={"flag": str(flag), "note": note})
    )
    wait_until(
        lambda: status_of(runtime, job_id) is JobStatus.DEAD,
        timeout=30,
        message=f"job {job_id} to be dead-lettered by the worker",
    )
    return job_id


def status_of(runtime: Runtime, job_id: int) -> JobStatus | None:
    record = runtime.store.get(job_id)
    return record.status if record else None


def test_every_page_shows_the_queue_the_worker_and_the_migration(
    settings: Settings, runtime: Runtime, spawner: Spawner, page: Tab, tmp_path: Path
) -> None:
    spawner.start(settings, "--pool", "batch")
    flag = tmp_path / "up"
    dead_ids = [dead_letter(runtime, flag, note=f"order {n}") for n in (1, 2)]
    flag.touch()
    done = runtime.store.enqueue_many(
        [NewJob(DELIVER, "batch", {"flag": str(flag), "note": f"n{n}"}) for n in range(20)]
    )
    wait_until(
        lambda: all(status_of(runtime, i) is JobStatus.SUCCEEDED for i in done),
        timeout=30,
        message="the worker to run 20 jobs",
    )
    queued = runtime.store.enqueue(
        NewJob(
            DELIVER, "transactional", {"flag": str(flag), "note": "waits"}, idempotency_key="k-7"
        )
    )
    release = tmp_path / "release"
    held = runtime.store.enqueue(NewJob(LINGER, "batch", {"release": str(release)}))
    wait_until(
        lambda: status_of(runtime, held) is JobStatus.RUNNING,
        timeout=30,
        message="the worker to hold the lingering job",
    )
    later = runtime.store.enqueue(
        NewJob(DIGEST, "transactional", {}, run_at=datetime.now(UTC) + timedelta(hours=1))
    )
    code = current_fingerprint(DELIVER)  # a load test certified this very code
    runtime.gate_store.insert_certification(
        DELIVER, code, {"jobs": 500, "p95_ms": 12.5, "duplicates": 0}, "loadtest@ci"
    )
    runtime.gate_store.upsert_rollout(DELIVER, RolloutMode.PERCENT, 25, "ops", "first step")

    visit(page, "/", shot="overview")
    for pool in ("batch", "transactional"):
        assert page.locator(f'#pools tr[data-pool="{pool}"]').count() == 1
    waiting = page.locator('#pools tr[data-pool="transactional"]')
    assert waiting.locator("td.depth").inner_text().strip() == "1"
    assert waiting.locator("td.scheduled").inner_text().strip() == "1"
    ours = page.locator('#pools tr[data-pool="batch"]')
    assert ours.locator("td.dead").inner_text().strip() == "2"
    assert int(ours.locator("td.running").inner_text()) >= 1  # the lingering job
    for chart in ("#chart-throughput", "#chart-lag"):
        assert page.locator(f"svg{chart}").count() == 1
    fragment = page.request.get(page.base + "/fragments/overview")
    assert fragment.status == 200 and 'data-pool="transactional"' in fragment.text()

    visit(page, "/jobs", shot="jobs")
    assert page.locator(f'#jobs tr[data-job-id="{queued}"]').count() == 1
    assert page.locator(f'#jobs tr[data-job-id="{done[0]}"]').count() == 1
    assert (
        page.locator(f'#jobs tr[data-job-id="{later}"] td.state').inner_text().strip()
        == "scheduled"
    )

    visit(page, f"/jobs/{dead_ids[0]}", shot="job")
    assert "order 1" in page.locator("#job-args").inner_text()
    assert page.locator("#job-state").inner_text().strip() == "dead"
    assert "the endpoint is down" in page.locator("#attempts tbody").inner_text()
    assert "the endpoint is down" in page.locator("pre.traceback").first.inner_text()
    visit(page, f"/jobs/{queued}")
    assert page.locator("#job-key").inner_text().strip() == "k-7"

    visit(page, "/dead", shot="dead")
    for dead_id in dead_ids:
        row = page.locator(f'#dead tr[data-job-id="{dead_id}"]')
        assert row.locator(f'input[type="checkbox"][name="ids"][value="{dead_id}"]').count() == 1

    visit(page, "/migration", shot="migration")
    row = page.locator(f'#migration tr[data-job="{DELIVER}"]')
    assert row.locator("td.verdict").inner_text().strip() == "needs_key"
    assert row.locator("td.certified").inner_text().strip() == "yes"
    assert code.startswith(row.locator("td.fingerprint").inner_text().strip())
    assert row.locator("td.certified-by").inner_text().strip() == "loadtest@ci"
    assert "25%" in row.locator("td.rollout").inner_text()

    visit(page, "/workers", shot="workers")
    assert page.locator("#workers tr[data-worker]").count() >= 1  # our worker, live
    assert "batch" in page.locator("#workers").inner_text()
    release.touch()
    visit(page, "/periodic", shot="periodic")
    assert DIGEST in page.locator("#periodic").inner_text()
    assert page.dialogs == []


def test_replaying_a_dead_job_from_the_page_runs_it_again(
    settings: Settings, runtime: Runtime, spawner: Spawner, page: Tab, tmp_path: Path
) -> None:
    spawner.start(settings, "--pool", "batch")
    flag = tmp_path / "endpoint-up"
    dead_id = dead_letter(runtime, flag, note="replay me")
    flag.touch()  # the endpoint is back: a replay now succeeds

    visit(page, "/dead")
    page.check(f'#dead input[name="ids"][value="{dead_id}"]')
    page.click("#replay-selected")
    page.wait_for_selector("button#confirm")
    assert status_of(runtime, dead_id) is JobStatus.DEAD  # nothing happens before confirming
    page.click("button#confirm")
    page.wait_for_selector("div.flash")
    assert re.search(r"/dead(\?|$)", page.url), page.url

    replayed = runtime.store.get(dead_id)  # a replayed dead job answers as its replay
    assert replayed is not None and replayed.id != dead_id

    def says_succeeded() -> bool:
        visit(page, f"/jobs/{replayed.id}")
        state: str = page.locator("#job-state").inner_text().strip()
        return state == JobStatus.SUCCEEDED.value

    wait_until(says_succeeded, timeout=30, interval=0.5, message="the job page to say succeeded")
    assert runtime.store.get(replayed.id).result == "delivered replay me"  # type: ignore[union-attr]


def test_a_rollout_switched_on_the_page_is_what_migrator_rollout_status_shows(
    settings: Settings, runtime: Runtime, page: Tab, tmp_path: Path
) -> None:
    migrator = Path(sys.executable).with_name("migrator")
    if not migrator.exists():
        pytest.skip("the job-migrator CLI is not installed in this venv")
    runtime.gate_store.add_shadow([ShadowDelta(DELIVER, "f" * 40, checked=100)])  # promotable
    visit(page, "/migration")
    row = page.locator(f'#migration tr[data-job="{DELIVER}"]')
    row.locator('select[name="mode"]').select_option("25%")
    row.locator('input[name="why"]').fill("canary for the receipts")
    row.locator('button, input[type="submit"]').first.click()
    page.wait_for_selector("div.flash")
    assert "25%" in page.locator(f'#migration tr[data-job="{DELIVER}"] td.rollout').inner_text()

    project = migrator_project(settings, tmp_path)
    status = run_migrator(migrator, project, "rollout", "status")
    cells = table_row(status, DELIVER)
    assert cells[1:2] == ["25%"] and cells[3] == "dashboard", status
    history = run_migrator(migrator, project, "rollout", "history", DELIVER)
    assert "canary for the receipts" in history and "dashboard" in history, history
    [change] = runtime.gate_store.rollout_changes(DELIVER)
    assert (change.after_label, change.changed_by) == ("25%", "dashboard")
    assert change.reason == "canary for the receipts"


def migrator_project(settings: Settings, tmp_path: Path) -> Path:
    """A project folder whose ``[tool.queue_runtime]`` names the test's schema and prefix."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[tool.queue_runtime]\n"
        f'mode = "queue"\ndatabase_url = "{settings.database_url}"\n'
        f'redis_url = "{settings.redis_url}"\nschema = "{settings.schema_name}"\n'
        f'redis_prefix = "{settings.redis_prefix}"\n'
    )
    return project


def run_migrator(migrator: Path, project: Path, *args: str) -> str:
    env = {**os.environ, "COLUMNS": "250"}
    env = {k: v for k, v in env.items() if not k.startswith("QUEUE_RUNTIME_")}
    done = subprocess.run(
        [str(migrator), *args, "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def table_row(text: str, first_cell: str) -> list[str]:
    """The cells of the rich table row that starts with ``first_cell``."""
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("│┃").split("│")]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row for {first_cell} in:\n{text}")


def test_an_action_without_the_token_is_refused(
    settings: Settings, runtime: Runtime, spawner: Spawner, browser: Any, page: Tab, tmp_path: Path
) -> None:
    spawner.start(settings, "--pool", "batch")
    dead_id = dead_letter(runtime, tmp_path / "never")
    stranger = browser.new_context()  # no token, no cookie
    try:
        tab = stranger.new_page()
        assert tab.goto(page.base + "/dead").status == 401
        # A form on another page posting to the dashboard: the browser sends no credentials.
        tab.set_content(
            f'<form method="post" action="{page.base}/dead/replay">'
            f'<input name="ids" value="{dead_id}"><input name="confirm" value="1">'
            '<button id="go">replay</button></form>'
        )
        with tab.expect_navigation() as navigation:
            tab.click("#go")
        assert navigation.value.status == 401
        assert tab.request.post(page.base + "/dead/purge", form={"ids": str(dead_id)}).status == 401
    finally:
        stranger.close()
    assert status_of(runtime, dead_id) is JobStatus.DEAD  # neither replayed nor purged


def test_arguments_holding_a_script_render_as_text(runtime: Runtime, page: Tab) -> None:
    job_id = runtime.store.enqueue(
        NewJob(DELIVER, "batch", {"flag": "/nowhere", "note": SCRIPT}, idempotency_key=SCRIPT)
    )
    visit(page, f"/jobs/{job_id}")
    assert SCRIPT in page.locator("#job-args").inner_text()
    assert page.locator("#job-key").inner_text().strip() == SCRIPT
    assert page.locator("#job-args script").count() == 0
    visit(page, "/jobs")
    assert page.locator(f'#jobs tr[data-job-id="{job_id}"]').count() == 1
    assert page.locator("#jobs script").count() == 0
    assert page.dialogs == []  # no alert() ever ran


def test_read_only_mode_renders_no_forms_and_refuses_posts(
    runtime: Runtime, browser: Any, dashboard: Dashboard
) -> None:
    runtime.store.enqueue(NewJob(DELIVER, "batch", {"flag": "/nowhere"}))
    base = dashboard("--read-only")
    context = browser.new_context()
    try:
        tab = context.new_page()
        assert tab.goto(f"{base}/?token={TOKEN}").status == 200
        for path in ("/", "/jobs", "/dead", "/migration", "/workers", "/periodic"):
            assert tab.goto(base + path).status == 200, path
            assert tab.locator("body").get_attribute("data-read-only") == "1", path
            # Filters are GET forms; no form writes, and no page holds a CSRF token.
            assert tab.locator('form[method="post"]').count() == 0, path
            assert tab.locator('input[name="csrf"], button[id*="replay"]').count() == 0, path
        refused = tab.request.post(base + "/migration/rollout", form={"job": DELIVER})
        assert refused.status == 403
    finally:
        context.close()
    assert runtime.gate_store.rollouts() == []
