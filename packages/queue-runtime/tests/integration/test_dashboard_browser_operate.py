"""The dashboard's operator features in a real headless Chromium (the ``browser`` suite).

The same set-up as ``test_dashboard_browser.py`` (its fixtures: a
``queue-runtime dashboard`` subprocess with ``--app`` and ``--inventory``, a
real worker, Debian's Chromium): search by argument value, the retrying and
scheduled views with "retry now" and "delete", cancel, pause and resume from
the page and the refusal of every anonymous or foreign write, failure rate and
durations by job name, the periodic page's last run and its switch, named
operators (``--tokens``), the migration page's columns, and the layout at
phone width (390 px). ``DASHBOARD_SCREENSHOTS=DIR`` saves each page shown in
docs/dashboard.md.
"""

# ruff: noqa: F811 - the fixtures imported from test_dashboard_browser are parameters here

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from queue_runtime import JobStatus, Settings
from queue_runtime.config import RolloutMode
from queue_runtime.runtime import Runtime
from queue_runtime.store import Failure, NewJob
from queue_runtime.testing import wait_until
from tests.integration.test_dashboard_browser import (  # noqa: F401 - fixtures
    DELIVER,
    DIGEST,
    LINGER,
    TOKEN,
    Dashboard,
    Tab,
    browser,
    current_fingerprint,
    dashboard,
    dead_letter,
    inventory,
    page,
    spawner,
    status_of,
    visit,
)
from tests.integration.workers import Spawner

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

BEN = "ben-second-token"
PHONE = {"width": 390, "height": 844}


def retrying(runtime: Runtime, flag: Path, note: str) -> int:
    """A ``deliver`` job that failed once and waits an hour for its retry (no worker ran it)."""
    job_id = runtime.store.enqueue(
        NewJob(DELIVER, "transactional", {"flag": str(flag), "note": note})
    )
    (claimed,) = runtime.store.claim("transactional", 1, "test")
    later = datetime.now(UTC) + timedelta(hours=1)
    failure = Failure(claimed.id, claimed.attempt, "ConnectionError: the endpoint timed out", "")
    runtime.store.fail(Failure(failure.id, failure.attempt, failure.error, retry_at=later))
    return job_id


def cell(page: Tab, table: str, key: str, column: str) -> str:
    text: str = page.locator(f"#{table} tr[{key}] td.{column}").inner_text()
    return text.strip()


def paused_by(settings: Settings, pool: str) -> str | None:
    query = sql.SQL("SELECT paused_by FROM {}.paused_pools WHERE pool = %s")
    with psycopg.connect(settings.database_url or "") as conn:
        found = conn.execute(query.format(sql.Identifier(settings.schema_name)), (pool,))
        row = found.fetchone()
    return str(row[0]) if row else None


def test_search_retry_now_delete_and_cancel_from_the_jobs_list(
    settings: Settings, runtime: Runtime, spawner: Spawner, page: Tab, tmp_path: Path
) -> None:
    flag = tmp_path / "up"
    flag.touch()
    waiting = retrying(runtime, flag, "order 4711 for ann@example.com")
    later = runtime.store.enqueue(
        NewJob(
            DELIVER,
            "transactional",
            {"flag": str(flag), "note": "order 99"},
            run_at=datetime.now(UTC) + timedelta(hours=3),
        )
    )
    queued = runtime.store.enqueue(NewJob(DELIVER, "batch", {"flag": "/x", "note": "q"}))

    visit(page, "/jobs")
    page.fill('input[name="q"]', "4711")
    page.click('form.filters button[type="submit"]')
    page.wait_for_url("**/jobs?*q=4711*")
    assert page.locator("#jobs tr[data-job-id]").count() == 1
    key = f'data-job-id="{waiting}"'
    assert "4711" in cell(page, "jobs", key, "args")
    assert "ConnectionError: the endpoint timed out" in cell(page, "jobs", key, "error")
    visit(page, "/jobs?q=4711", shot="jobs-search")

    visit(page, "/jobs?state=retrying", shot="jobs-retrying")
    assert page.locator("#jobs tr[data-job-id]").count() == 1
    spawner.start(settings, "--pool", "transactional")  # it waits an hour: until retried now
    page.check(f'#jobs input[name="ids"][value="{waiting}"]')
    page.click("#retry-selected")
    page.wait_for_selector("div.flash")
    assert "1 waiting job(s) made due now" in page.locator("div.flash").inner_text()
    wait_until(
        lambda: status_of(runtime, waiting) is JobStatus.SUCCEEDED,
        timeout=30,
        message="the worker to run the job retried now",
    )

    visit(page, "/jobs?state=scheduled", shot="jobs-scheduled")
    assert cell(page, "jobs", f'data-job-id="{later}"', "state") == "scheduled"
    page.check(f'#jobs input[name="ids"][value="{later}"]')
    page.click("#delete-selected")
    page.wait_for_selector("div.flash")
    assert page.locator(f'#jobs tr[data-job-id="{later}"]').count() == 0
    record = runtime.store.get(later)
    assert record is not None and record.status is JobStatus.CANCELLED
    assert record.error == "cancelled by dashboard"  # --token: one operator, "dashboard"

    visit(page, "/jobs?state=queued")  # in batch, which no worker serves here
    page.check(f'#jobs input[name="ids"][value="{queued}"]')
    page.click("#cancel-selected")
    page.wait_for_selector("div.flash")
    assert status_of(runtime, queued) is JobStatus.CANCELLED
    assert page.dialogs == []


def test_pause_and_resume_a_pool_from_the_overview(
    settings: Settings, runtime: Runtime, spawner: Spawner, page: Tab, tmp_path: Path
) -> None:
    spawner.start(settings, "--pool", "batch")
    visit(page, "/")
    page.click('#pools tr[data-pool="batch"] button.pause')
    page.wait_for_selector("div.flash")
    assert page.locator('#pools tr[data-pool="batch"][data-paused="1"]').count() == 1
    assert paused_by(settings, "batch") == "dashboard"
    visit(page, "/", shot="overview-paused")
    flag = tmp_path / "up"
    flag.touch()
    held = runtime.store.enqueue(NewJob(DELIVER, "batch", {"flag": str(flag), "note": "p"}))
    page.click('#pools tr[data-pool="batch"] button.resume')
    page.wait_for_selector("div.flash")
    assert "pool batch resumed" in page.locator("div.flash").inner_text()
    assert paused_by(settings, "batch") is None
    wait_until(
        lambda: status_of(runtime, held) is JobStatus.SUCCEEDED,
        timeout=30,
        message="the worker to run the job once its pool is resumed",
    )


def test_writes_without_the_token_csrf_or_own_origin_are_refused(
    settings: Settings, runtime: Runtime, browser: Any, page: Tab
) -> None:
    waiting = runtime.store.enqueue(
        NewJob(
            DELIVER, "transactional", {"flag": "/x"}, run_at=datetime.now(UTC) + timedelta(hours=1)
        )
    )
    stranger = browser.new_context()
    try:
        tab = stranger.new_page()
        for path, form in (
            ("/pools/pause", {"pool": "batch"}),
            ("/jobs/cancel", {"ids": str(waiting)}),
            ("/jobs/retry", {"ids": str(waiting)}),
            ("/periodic/switch", {"job": DIGEST, "enabled": "0", "why": "x"}),
        ):
            assert tab.request.post(page.base + path, form=form).status == 401, path
    finally:
        stranger.close()
    visit(page, "/")
    csrf = page.locator('input[name="csrf"]').first.get_attribute("value")
    no_csrf = page.request.post(page.base + "/pools/pause", form={"pool": "batch"})
    assert no_csrf.status == 403
    foreign = page.request.post(
        page.base + "/pools/pause",
        form={"pool": "batch", "csrf": csrf},
        headers={"Origin": "https://evil.example"},
    )
    assert foreign.status == 403 and "another site" in foreign.text()
    assert paused_by(settings, "batch") is None
    assert status_of(runtime, waiting) is JobStatus.QUEUED


def test_failure_rate_and_duration_by_job_name(
    settings: Settings, runtime: Runtime, spawner: Spawner, page: Tab, tmp_path: Path
) -> None:
    spawner.start(settings, "--pool", "batch")
    flag = tmp_path / "up"
    dead_letter(runtime, flag, note="down")
    flag.touch()
    done = runtime.store.enqueue_many(
        [NewJob(DELIVER, "batch", {"flag": str(flag), "note": f"n{n}"}) for n in range(3)]
    )
    wait_until(
        lambda: all(status_of(runtime, i) is JobStatus.SUCCEEDED for i in done),
        timeout=30,
        message="the worker to run 3 jobs",
    )
    visit(page, "/stats", shot="stats")
    key = f'data-job="{DELIVER}"'
    assert cell(page, "by-name", key, "finished") == "4"
    assert cell(page, "by-name", key, "dead") == "1"
    assert cell(page, "by-name", key, "failure-rate") == "25%"
    assert cell(page, "by-name", key, "run-p95").endswith(("ms", "s"))
    for chart in ("#chart-failure-rate", "#chart-duration"):
        ticks = page.locator(f"svg{chart} text.tick").all_text_contents()
        assert len(ticks) >= 2, ticks  # a real axis: several labelled ticks
        assert page.locator(f"svg{chart} rect").count() >= 1
    ticks = page.locator("svg#chart-failure-rate text.tick").all_text_contents()
    assert ticks == ["0%", "10%", "20%", "30%"]  # round steps past the 25% peak


def test_the_periodic_page_shows_the_last_run_and_switches_it_off(
    settings: Settings, runtime: Runtime, spawner: Spawner, page: Tab
) -> None:
    spawner.start(settings, "--pool", "batch")  # ticks the latest due hour at once

    def ran() -> bool:
        visit(page, "/periodic")
        return cell(page, "periodic", f'data-job="{DIGEST}"', "outcome") == "succeeded"

    wait_until(ran, timeout=30, interval=0.5, message="the periodic page to show the last run")
    row = page.locator(f'#periodic tr[data-job="{DIGEST}"]')
    assert row.locator("td.last-run a").count() == 1
    visit(page, "/periodic", shot="periodic")
    row.locator('input[name="why"]').fill("the digest mailer is being moved")
    row.locator('button[type="submit"]').click()
    page.wait_for_selector("div.flash")
    assert row.locator("td.enabled").get_attribute("data-enabled") == "0"
    assert runtime.store.disabled_periodic() == frozenset({DIGEST})
    audit = page.locator("#periodic-switches tbody tr").first.inner_text()
    assert "dashboard" in audit and "the digest mailer is being moved" in audit


def test_named_operators_each_their_token_and_the_audit_names_them(
    settings: Settings, runtime: Runtime, browser: Any, dashboard: Dashboard, tmp_path: Path
) -> None:
    tokens = tmp_path / "operators.toml"
    tokens.write_text(f'ann = "{TOKEN}"\nben = "{BEN}"\n')
    base = dashboard("--tokens", str(tokens))
    context = browser.new_context()
    try:
        tab = context.new_page()
        assert tab.goto(f"{base}/?token=wrong-{BEN}").status == 401
        assert tab.goto(f"{base}/?token={BEN}").status == 200
        tab.click('#pools tr[data-pool="batch"] button.pause')
        tab.wait_for_selector("div.flash")
        assert paused_by(settings, "batch") == "ben"
        tab.goto(base + "/periodic")
        row = tab.locator(f'#periodic tr[data-job="{DIGEST}"]')
        row.locator('input[name="why"]').fill("ben's maintenance")
        row.locator('button[type="submit"]').click()
        tab.wait_for_selector("div.flash")
        assert "ben" in tab.locator("#periodic-switches td.by").first.inner_text()
    finally:
        context.close()


def test_the_migration_page_says_what_each_job_does_now(runtime: Runtime, page: Tab) -> None:
    runtime.gate_store.upsert_rollout(LINGER, RolloutMode.ASYNC, 100, "ops", "all async")
    code = current_fingerprint(DELIVER)
    figures = {
        "enqueued": 5000,
        "lost": 0,
        "dead": 0,
        "max_dead": 5,
        "p99_ms": 41.0,
        "sla_p99_ms": 500,
        "throughput": 312.4,
        "retries": 7,
        "run_id": "lt-1",
    }
    runtime.gate_store.insert_certification(DELIVER, code, figures, "loadtest@ci")
    visit(page, "/migration", shot="migration")
    lingers = f'data-job="{LINGER}"'
    assert cell(page, "migration", lingers, "rollout") == "async"
    runs = page.locator(f"#migration tr[{lingers}] td.runs")
    assert runs.get_attribute("data-runs") == "inline"  # non_idempotent, gate closed
    assert "gate is closed" in runs.inner_text()
    assert cell(page, "migration", f'data-job="{DIGEST}"', "certified") == "n/a"
    delivers = f'data-job="{DELIVER}"'
    assert code.startswith(cell(page, "migration", delivers, "fingerprint"))
    assert len(cell(page, "migration", lingers, "fingerprint")) == 12  # --app: loaded code
    shown = page.locator(f"#migration tr[{delivers}] td.figures span.figure").all_inner_texts()
    assert "p99_ms 41 (max 500)" in shown and not any("throughput" in s for s in shown)
    page.locator(f"#migration tr[{delivers}] details.all-figures summary").click()
    assert "throughput=312.4" in page.locator(f"#migration tr[{delivers}] details").inner_text()
    lines = page.locator(f"#migration tr[{lingers}] td.job").evaluate(
        "td => { const r = document.createRange(); r.selectNodeContents(td);"
        " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }"
    )
    assert lines <= 2, lines  # a 46-character name is not cut every few characters


@pytest.fixture
def phone(browser: Any, dashboard: Dashboard) -> Iterator[Tab]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, device_scale_factor=2)
    context.set_default_timeout(10_000)
    tab = Tab(context.new_page(), dashboard())
    assert tab.goto(f"{tab.base}/?token={TOKEN}").status == 200
    try:
        yield tab
    finally:
        context.close()


def test_at_phone_width_the_navigation_shows_and_tables_scroll_in_their_box(
    runtime: Runtime, phone: Tab
) -> None:
    runtime.store.enqueue_many(
        [NewJob(DELIVER, "batch", {"flag": "/x", "note": "a long note " * 8}) for _ in range(3)]
    )
    for path in ("/", "/jobs", "/stats", "/dead", "/migration", "/workers", "/periodic"):
        visit(phone, path, shot="phone-jobs" if path == "/jobs" else None)
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (path, width)  # the page itself never scrolls sideways
        for link in phone.locator("nav a").all():
            box = link.bounding_box()
            assert box is not None and box["x"] >= 0, (path, box)
            assert box["x"] + box["width"] <= PHONE["width"], (path, link.inner_text(), box)
        for wide in phone.locator("div.wide").all():
            box = wide.bounding_box()
            assert box is not None and box["x"] + box["width"] <= PHONE["width"], (path, box)
    visit(phone, "/jobs")
    table_box = phone.locator("#jobs").evaluate("t => t.parentElement.scrollWidth")
    box_width = phone.locator("#jobs").evaluate("t => t.parentElement.clientWidth")
    assert table_box > box_width  # the wide table scrolls inside its box
    phone.locator("#jobs").evaluate("t => { t.parentElement.scrollLeft = 10000; }")
    assert phone.locator("#jobs").evaluate("t => t.parentElement.scrollLeft") > 0
