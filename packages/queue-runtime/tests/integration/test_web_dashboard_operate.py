"""The dashboard's operator features over HTTP, against the real PostgreSQL and Redis.

The jobs list (argument search, error and argument columns, the retrying and
scheduled views with "retry now" and "delete", cancel), pause and resume of a
pool, failure rate and durations by job name, the periodic page's last run,
the migration page's columns (what each job does now and why), named
operators, and the standalone command's start-up errors. The same contract
runs in Chromium in ``test_dashboard_browser.py``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from queue_runtime import Mode, Settings
from queue_runtime.config import RolloutMode
from queue_runtime.definition import JobDefinition
from queue_runtime.periodic import tick_key
from queue_runtime.pg.dashboard import PgDashboard
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import Completion, Failure, JobStatus, NewJob
from queue_runtime.testing import memory_runtime
from queue_runtime.web import make_wsgi_app
from queue_runtime.web.command import StartError, read_tokens
from tests.integration.test_web_dashboard_http import Backend, Client, ids_in

pytestmark = [pytest.mark.pg, pytest.mark.redis]

ALICE, BOB = "alice-token-1", "bob-token-2"
CHARGE = "shop.billing.charge"
MAIL = "shop.mail.send_welcome"
TICK = "shop.reports.hourly"


def charge(order_id: int) -> None: ...
def send_welcome(user_id: int) -> None: ...
def hourly() -> None: ...


@pytest.fixture
def jobs() -> Registry:
    """A registry of this test's own (the app-wide one stays untouched)."""
    registry = Registry()
    registry.add(JobDefinition.declare(charge, CHARGE, "batch"))
    registry.add(JobDefinition.declare(send_welcome, MAIL, "batch", idempotent=True))
    registry.add(JobDefinition.declare(hourly, TICK, "batch", every=timedelta(hours=1)))
    return registry


@pytest.fixture(params=list(Backend), ids=[b.value for b in Backend])
def rt(request: pytest.FixtureRequest, jobs: Registry) -> Iterator[Runtime]:
    """On PostgreSQL and Redis, or on the memory stores (the dashboard reads alike on both);
    a test that reads the tables itself runs on PostgreSQL only (``PG_ONLY``)."""
    if request.param is Backend.PG:
        runtime = Runtime(request.getfixturevalue("settings"), registry=jobs)
    else:
        runtime = memory_runtime(Settings(mode=Mode.QUEUE), registry=jobs)
    try:
        yield runtime
    finally:
        runtime.close()


@pytest.fixture
def inventory(tmp_path: Path) -> str:
    """``charge`` non_idempotent (and moved: an enqueue site), ``send_welcome`` idempotent,
    named from inside the package (``mail.send_welcome``) as a scan of ``shop/`` names it."""
    jobs = [
        {"qualname": CHARGE, "idempotency": "non_idempotent", "confidence": "high"},
        {"qualname": "mail.send_welcome", "idempotency": "idempotent", "confidence": "high"},
    ]
    sites = [{"job": CHARGE, "pattern": "enqueue", "idempotency": "non_idempotent"}]
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"root": str(tmp_path), "jobs": jobs, "sites": sites}))
    return str(path)


@pytest.fixture
def client(rt: Runtime, inventory: str) -> Iterator[Client]:
    app = make_wsgi_app(rt, token={"alice": ALICE, "bob": BOB}, inventory=inventory)
    c = Client(app)
    assert c.get(f"/?token={ALICE}").status == 303
    yield c
    app.close()  # type: ignore[attr-defined]


PG_ONLY = pytest.mark.parametrize("rt", [Backend.PG], ids=["pg"], indirect=True)


def enqueue(rt: Runtime, args: dict[str, Any], **options: Any) -> int:
    return rt.store.enqueue(NewJob(CHARGE, options.pop("pool", "batch"), args, **options))


def retrying(rt: Runtime, args: dict[str, Any], error: str = "TimeoutError: bank") -> int:
    job_id = enqueue(rt, args, pool="transactional")
    (claimed,) = rt.store.claim("transactional", 1, "w1")
    later = datetime.now(UTC) + timedelta(hours=1)
    rt.store.fail(Failure(claimed.id, claimed.attempt, error, retry_at=later))
    return job_id


def audit(settings: Settings, job_id: int) -> list[tuple[str, Any]]:
    query = sql.SQL("SELECT action, detail FROM {}.job_audit WHERE job_id = %s ORDER BY id")
    with psycopg.connect(settings.database_url or "") as conn:
        found = conn.execute(query.format(sql.Identifier(settings.schema_name)), (job_id,))
        return [(a, d) for a, d in found.fetchall()]


def row(body: str, attribute: str) -> str:
    return body.split(f"<tr {attribute}", 1)[1].split("</tr>", 1)[0]


def test_the_jobs_list_searches_argument_values_and_shows_errors_and_arguments(
    client: Client, rt: Runtime
) -> None:
    wanted = enqueue(rt, {"order_id": 1234, "email": "ann@example.com"})
    other = enqueue(rt, {"order_id": 99, "email": "bob@example.com", "note": "x" * 300})
    odd = enqueue(rt, {"order_id": 5, "note": "100% off_today"})
    failing = retrying(rt, {"order_id": 7})
    assert ids_in(client.get("/jobs?q=1234").body, "jobs") == [wanted]
    assert ids_in(client.get("/jobs?q=ANN%40EXAMPLE").body, "jobs") == [wanted]  # any case
    assert ids_in(client.get("/jobs?q=%25+off_").body, "jobs") == [odd]  # % and _ literal
    assert ids_in(client.get("/jobs?q=example.com&state=queued").body, "jobs") == [other, wanted]
    page = client.get("/jobs").body
    preview = row(page, f'data-job-id="{other}"').split('<td class="args"><code>')[1]
    assert preview.startswith("{&#34;note&#34;") or preview.startswith("{&#34;email&#34;")
    assert "…</code>" in preview and len(preview.split("</code>")[0]) < 300
    assert "TimeoutError: bank" in row(page, f'data-job-id="{failing}"')


@PG_ONLY
def test_retrying_and_scheduled_views_retry_now_and_delete(
    client: Client, rt: Runtime, settings: Settings
) -> None:
    due = enqueue(rt, {"order_id": 1})
    later = enqueue(rt, {"order_id": 2}, run_at=datetime.now(UTC) + timedelta(hours=2))
    failing = retrying(rt, {"order_id": 3})
    assert ids_in(client.get("/jobs?state=queued").body, "jobs") == [due]
    scheduled = client.get("/jobs?state=scheduled").body
    assert ids_in(scheduled, "jobs") == [later]
    assert 'id="retry-selected"' in scheduled and 'id="delete-selected"' in scheduled
    assert '<td class="state">scheduled</td>' in scheduled
    assert ids_in(client.get("/jobs?state=retrying").body, "jobs") == [failing]

    csrf = client.csrf("/jobs?state=retrying")
    form = [("csrf", csrf), ("state", "retrying"), ("ids", str(failing))]
    done = client.post("/jobs/retry", form)
    assert done.status == 303
    assert done.header("Location") == "/jobs?state=retrying&flash=retried&n=1"
    assert (
        '<div class="flash">1 waiting job(s) made due now</div>'
        in client.get(done.header("Location")).body
    )
    (claimed,) = rt.store.claim("transactional", 1, "w2")  # due now: a worker takes it
    assert claimed.id == failing
    assert audit(settings, failing) == [("retry_now", {"by": "alice"})]

    gone = client.post(
        "/jobs/cancel", [("csrf", csrf), ("state", "scheduled"), ("ids", str(later))]
    )
    assert gone.status == 303 and "flash=cancelled&n=1" in gone.header("Location")
    record = rt.store.get(later)
    assert record is not None and record.status is JobStatus.CANCELLED
    assert record.error == "cancelled by alice"
    assert ids_in(client.get("/jobs?state=scheduled").body, "jobs") == []


def test_cancel_asks_a_running_job_to_stop_and_names_the_operator(
    client: Client, rt: Runtime
) -> None:
    job_id = enqueue(rt, {"order_id": 8}, pool="transactional")
    rt.store.claim("transactional", 1, "w1")
    bob = Client(client.app)
    assert bob.get(f"/?token={BOB}").status == 303
    done = bob.post("/jobs/cancel", [("csrf", bob.csrf("/jobs")), ("ids", str(job_id))])
    assert "asked=1" in done.header("Location")
    assert job_id in rt.store.control([job_id]).cancel_requested


@pytest.mark.parametrize("bad", ["\u00b2", "\u0661", "9223372036854775808", "1" * 5000, "-1"])
def test_a_job_id_that_is_not_a_bigint_is_a_400_and_cancels_nothing(
    client: Client, rt: Runtime, bad: str
) -> None:
    """Unicode digits pass str.isdigit but not int(); past bigint PostgreSQL refuses the query."""
    job_id = enqueue(rt, {"order_id": 9})
    answer = client.post(
        "/jobs/cancel", [("csrf", client.csrf("/jobs")), ("ids", str(job_id)), ("ids", bad)]
    )
    assert answer.status == 400 and "job ids" in answer.body
    assert rt.store.get(job_id) is not None
    assert rt.store.get(job_id).status is JobStatus.QUEUED


@PG_ONLY
def test_pause_and_resume_a_pool_from_the_overview(
    client: Client, rt: Runtime, settings: Settings
) -> None:
    enqueue(rt, {"order_id": 1})
    csrf = client.csrf("/")
    done = client.post("/pools/pause", [("csrf", csrf), ("pool", "batch")])
    assert done.status == 303 and done.header("Location") == "/?flash=paused&pool=batch"
    page = client.get(done.header("Location")).body
    assert "pool batch paused" in page
    assert 'data-pool="batch" class="paused" data-paused="1"' in page
    query = sql.SQL("SELECT paused_by FROM {}.paused_pools WHERE pool = 'batch'")
    with psycopg.connect(settings.database_url or "") as conn:
        by = conn.execute(query.format(sql.Identifier(settings.schema_name))).fetchone()
    assert by == ("alice",)
    assert "batch" in rt.store.control([]).paused  # what every worker polls
    assert client.post("/pools/resume", [("csrf", csrf), ("pool", "batch")]).status == 303
    assert 'data-paused="1"' not in client.get("/fragments/overview").body
    assert "batch" not in rt.store.control([]).paused
    unknown = client.post("/pools/pause", [("csrf", csrf), ("pool", "nope")])
    assert unknown.status == 400 and "unknown pool" in unknown.body


@PG_ONLY
def test_mounted_the_host_apps_user_is_who_acted(rt: Runtime, inventory: str) -> None:
    """No token: the app's authentication is the gate, and ``who(environ)`` names its user."""
    app = make_wsgi_app(rt, inventory=inventory, who=lambda environ: environ.get("HTTP_X_USER"))
    carol = Client(app)
    waiting = enqueue(rt, {"order_id": 1}, run_at=datetime.now(UTC) + timedelta(hours=1))
    csrf = carol.csrf("/jobs")
    paused = carol.post("/pools/pause", [("csrf", csrf), ("pool", "batch")], X_USER="carol")
    cancelled = carol.post("/jobs/cancel", [("csrf", csrf), ("ids", str(waiting))], X_USER="carol")
    assert (paused.status, cancelled.status) == (303, 303)
    record = rt.store.get(waiting)
    assert record is not None and record.error == "cancelled by carol"
    assert paused_by_name(rt) == "carol"
    app.close()  # type: ignore[attr-defined]


def paused_by_name(rt: Runtime) -> str | None:
    query = sql.SQL("SELECT paused_by FROM {}.paused_pools WHERE pool = 'batch'")
    with psycopg.connect(rt.settings.database_url or "") as conn:
        found = conn.execute(query.format(sql.Identifier(rt.settings.schema_name))).fetchone()
    return str(found[0]) if found else None


def test_no_write_without_the_token_csrf_or_own_origin(
    client: Client, rt: Runtime, inventory: str
) -> None:
    waiting = enqueue(rt, {"order_id": 1}, run_at=datetime.now(UTC) + timedelta(hours=1))
    csrf = client.csrf("/jobs")
    stranger = Client(client.app, cookies={"qr_session": client.cookies["qr_session"]})
    actions = [
        ("/jobs/cancel", [("ids", str(waiting))]),
        ("/jobs/retry", [("ids", str(waiting))]),
        ("/pools/pause", [("pool", "batch")]),
    ]
    for path, form in actions:
        assert stranger.post(path, [("csrf", csrf), *form]).status == 401, path
        assert stranger.get(f"/?token=wrong-{ALICE}").status == 401
        assert client.post(path, form).status == 403, path  # no CSRF token
        foreign = client.post(path, [("csrf", csrf), *form], ORIGIN="https://evil.example")
        assert foreign.status == 403, path
    read_only = Client(make_wsgi_app(rt, token=ALICE, read_only=True, inventory=inventory))
    read_only.get(f"/?token={ALICE}")
    assert read_only.post("/pools/pause", [("pool", "batch")]).status == 403
    assert 'action="/pools/' not in read_only.get("/").body
    record = rt.store.get(waiting)
    assert record is not None and record.status is JobStatus.QUEUED
    assert not any(s.paused for s in rt.store.stats())
    read_only.app.close()  # type: ignore[attr-defined]


def test_failure_rate_and_durations_by_job_name(client: Client, rt: Runtime) -> None:
    ids = [enqueue(rt, {"order_id": n}) for n in range(4)]
    rt.store.enqueue(NewJob(MAIL, "batch", {"user_id": 1}))
    claimed = {c.id: c for c in rt.store.claim("batch", 10, "w1")}
    rt.store.complete_many([Completion(i, claimed[i].attempt) for i in ids[:3]])
    rt.store.fail(Failure(ids[3], claimed[ids[3]].attempt, "ValueError: card declined"))
    mail = next(c for c in claimed.values() if c.name == MAIL)
    rt.store.complete_many([Completion(mail.id, mail.attempt)])
    page = client.get("/stats").body
    charged = row(page, f'data-job="{CHARGE}"')
    assert '<td class="finished num">4</td>' in charged
    assert '<td class="dead num">1</td>' in charged
    assert '<td class="failure-rate num">25%</td>' in charged
    assert '<td class="run-p95 num">' in charged and "ms</td>" in charged  # measured
    assert '<td class="failure-rate num">0%</td>' in row(page, f'data-job="{MAIL}"')
    for chart in ("chart-failure-rate", "chart-duration"):
        svg = page.split(f'<svg id="{chart}"', 1)[1].split("</svg>", 1)[0]
        assert 'class="tick">0%</text>' in svg or 'class="tick">0.0s</text>' in svg
        assert "<rect" in svg
    assert client.get("/stats?hours=25").status == 400


@PG_ONLY
def test_the_figures_of_a_busy_window_are_a_sample_spread_over_it_and_say_so(
    rt: Runtime,
) -> None:
    ids = [enqueue(rt, {"order_id": n}) for n in range(5)]
    claimed = rt.store.claim("batch", 10, "w1")
    rt.store.complete_many([Completion(c.id, c.attempt) for c in claimed])
    queries = PgDashboard.open(rt.settings)
    try:
        until = datetime.now(UTC) + timedelta(minutes=1)
        since = until - timedelta(hours=1)
        whole = queries.by_name(since, until)
        assert [(r.name, r.finished) for r in whole.rows] == [(CHARGE, len(ids))]
        assert not whole.capped
        sample = queries.by_name(since, until, cap=60)  # one row read per minute
        assert sample.capped and 1 <= sample.rows[0].finished <= 2  # one minute, or two
    finally:
        queries.close()


def test_the_periodic_page_shows_the_last_run_and_its_outcome(
    client: Client, rt: Runtime, jobs: Registry
) -> None:
    schedule = jobs.definition(TICK).schedule
    assert schedule is not None
    tick = schedule.latest(datetime.now(UTC))
    key = tick_key(TICK, tick)
    job_id = rt.store.enqueue(NewJob(TICK, "batch", {}, idempotency_key=key))
    page = client.get("/periodic").body
    cells = row(page, f'data-job="{TICK}"')
    assert f'href="/jobs/{job_id}"' in cells and 'data-outcome="queued"' in cells
    (claimed,) = rt.store.claim("batch", 1, "w1")
    rt.store.fail(Failure(claimed.id, claimed.attempt, "OSError: disk full"))
    cells = row(client.get("/periodic").body, f'data-job="{TICK}"')
    assert 'data-outcome="dead"' in cells and "dead: OSError: disk full" in cells


def test_a_periodic_job_switched_off_on_the_page_is_audited_with_who_and_why(
    client: Client, rt: Runtime
) -> None:
    csrf = client.csrf("/periodic")
    form = [("csrf", csrf), ("job", TICK), ("enabled", "0")]
    assert client.post("/periodic/switch", form).status == 400  # no reason: refused
    done = client.post("/periodic/switch", [*form, ("why", "the report server is down")])
    assert done.status == 303 and "flash=periodic-off" in done.header("Location")
    assert rt.store.disabled_periodic() == frozenset({TICK})
    page = client.get(done.header("Location")).body
    assert 'data-enabled="0"' in row(page, f'data-job="{TICK}"')
    audit_row = page.split('<table id="periodic-switches">', 1)[1]
    assert '<td class="by">alice</td>' in audit_row
    assert '<td class="why">the report server is down</td>' in audit_row
    on = [("csrf", csrf), ("job", TICK), ("enabled", "1"), ("why", "back")]
    assert client.post("/periodic/switch", on).status == 303
    assert rt.store.disabled_periodic() == frozenset()
    unknown = [("csrf", csrf), ("job", CHARGE), ("enabled", "0"), ("why", "x")]
    assert client.post("/periodic/switch", unknown).status == 400  # not periodic


def test_the_migration_page_says_what_each_job_does_now_and_why(
    client: Client, rt: Runtime
) -> None:
    rt.gate_store.upsert_rollout(CHARGE, RolloutMode.ASYNC, 100, "ops", "go")
    page = client.get("/migration").body
    charged = row(page, f'data-job="{CHARGE}"')
    assert '<td class="verdict">non_idempotent</td>' in charged
    assert "phase 3" in charged and "(moved)" in charged
    assert '<td class="certified">no</td>' in charged
    fingerprint = charged.split('<td class="fingerprint" title="', 1)[1].split('"', 1)[0]
    assert len(fingerprint) >= 12  # the loaded code's, though nothing is certified
    assert 'data-runs="inline"' in charged and "the gate is closed" in charged
    mail = row(page, f'data-job="{MAIL}"')
    assert '<td class="verdict">idempotent</td>' in mail  # found as mail.send_welcome
    assert '<td class="certified">n/a</td>' in mail
    assert 'data-job="mail.send_welcome"' not in page  # one row, not two

    figures = {
        "enqueued": 5000,
        "lost": 0,
        "dead": 1,
        "max_dead": 5,
        "p99_ms": 80.0,
        "sla_p99_ms": 500,
        "throughput": 321.5,
        "run_id": "r1",
    }
    rt.gate_store.insert_certification(CHARGE, fingerprint, figures, "loadtest@ci")
    charged = row(client.get("/migration").body, f'data-job="{CHARGE}"')
    assert '<td class="certified">yes</td>' in charged and 'data-runs="async"' in charged
    shown = charged.split('<td class="figures">', 1)[1].split("<details", 1)[0]
    assert "dead 1 (max 5)" in shown and "p99_ms 80 (max 500)" in shown
    assert "throughput" not in shown and "run_id" not in shown
    assert "throughput=321.5" in charged.split("<details", 1)[1]  # behind "all figures"


def test_read_tokens_needs_one_distinct_token_per_operator(tmp_path: Path) -> None:
    good = tmp_path / "tokens.toml"
    good.write_text('alice = "t-1"\nbob = "t-2"\n')
    assert read_tokens(str(good)) == {"alice": "t-1", "bob": "t-2"}
    for text, says in (
        ('alice = "t"\nbob = "t"\n', "share a token"),
        ("alice = 3\n", "'alice' is not"),
        ("", "no operator"),
        ("alice = ", "cannot read it as TOML"),
    ):
        good.write_text(text)
        with pytest.raises(StartError, match=says):
            read_tokens(str(good))
    with pytest.raises(StartError, match="cannot read"):
        read_tokens(str(tmp_path / "missing.toml"))


def dashboard_command(settings: Settings, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QUEUE_RUNTIME_DATABASE_URL": settings.database_url or ""}
    env.pop("QUEUE_RUNTIME_DASHBOARD_TOKEN", None)
    cmd = [sys.executable, "-m", "queue_runtime.cli", "--schema", settings.schema_name]
    return subprocess.run(
        [*cmd, "dashboard", *flags], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_missing_inventory_or_a_taken_port_fails_at_start_in_one_line(
    settings: Settings, tmp_path: Path
) -> None:
    missing = dashboard_command(settings, "--inventory", str(tmp_path / "missing.json"))
    assert missing.returncode == 2 and "serving" not in missing.stdout
    assert missing.stderr.count("\n") == 1
    assert "missing.json: cannot read it: No such file or directory" in missing.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = dashboard_command(settings, "--port", str(port))
    assert busy.returncode == 2 and "serving" not in busy.stdout
    assert busy.stderr.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/jobs/9223372036854775808", 404),  # past bigint: no such page, not a database error
        ("/jobs/9223372036854775807", 404),  # the largest bigint: a job id nobody has
        ("/jobs/\u0661", 404),  # an Arabic-Indic one: only ASCII digits name a job
        ("/jobs?after=\u00b2", 400),
        ("/jobs?after=9223372036854775808", 400),
        ("/stats?hours=\u00b2", 400),
        ("/stats?hours=" + "1" * 5000, 400),
        ("/jobs?flash=cancelled&n=\u00b2&asked=\u00b2", 200),  # a flash's count is cosmetic
        ("/dead?flash=replayed&n=" + "9" * 5000, 200),
    ],
)
def test_numbers_in_a_url_that_are_not_bigints_are_answered_not_crashed_on(
    client: Client, path: str, status: int
) -> None:
    """``"²".isdigit()`` is true and ``int("²")`` raises; ``int`` refuses 5,000 digits."""
    assert client.get(path).status == status
