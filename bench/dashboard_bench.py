"""How fast the dashboard's pages answer with 1,000,000 jobs in history and 100,000 queued.

    .venv/bin/python bench/dashboard_bench.py [--history 1000000] [--queued 100000]
        [--requests 30] [--warmup 3] [--limit-ms 300] [--json PATH]

Creates a database of its own (``bench_dashboard_<pid>``, dropped at the end),
migrates the queue schema into it, seeds the history and the queue with
``INSERT ... SELECT generate_series`` (ids, names, pools, states, timings and
dead letters spread as a shop's would be), starts ``queue-runtime dashboard``
on a free port with a token, and times every page with a plain HTTP client
(``http.client``, one keep-alive connection, ``Authorization: Bearer``):
``--warmup`` requests first, then ``--requests`` timed ones. Prints median and
p95 per page and exits 1 when a page's p95 is over ``--limit-ms`` (or a page
does not answer 200). See bench/README.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from queue_runtime import Settings
from queue_runtime.config import Mode, RolloutMode
from queue_runtime.migrations import migrate
from queue_runtime.pg import admin
from queue_runtime.runtime import Runtime
from queue_runtime.testing import (
    delete_redis_prefix,
    free_port,
    pg_admin_url,
    redis_test_url,
    wait_until,
)

TOKEN = secrets.token_urlsafe(16)
JOB_NAMES = [
    "shop.mail.send_receipt",
    "shop.mail.send_welcome",
    "shop.billing.charge_card",
    "shop.billing.refund",
    "shop.stock.reserve",
    "shop.stock.release",
    "shop.search.reindex_product",
    "shop.images.make_thumbnails",
    "shop.webhooks.deliver",
    "shop.audit.record",
    "shop.cache.warm",
]
POOLS = ["default", "batch", "critical"]
VERDICTS = ["idempotent", "needs_key", "non_idempotent", "unsafe", "unknown"]
RARE_JOB = "shop.reports.daily_sales"  # 1 job in 1,000 of the history, never dead
NEVER_RUN = "shop.reports.yearly_close"  # in the inventory, never enqueued

# The history: ids 1..N in finishing order over the last 24 hours (the BRIN on
# finished_at assumes that order), 1% dead (arguments, error, traceback and
# five attempts kept, as the runtime keeps them), 0.4% cancelled, the rest
# succeeded without arguments (the runtime does not copy them on success).
SEED_HISTORY = """
INSERT INTO {s}.job_history
    (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
     enqueued_at, finished_at, args, result, error, traceback, errors)
SELECT i,
       CASE WHEN i %% 1000 = 1 THEN %(rare)s
            ELSE (%(names)s::text[])[1 + (i * 7) %% %(n_names)s] END,
       (%(pools)s::text[])[1 + i %% 3],
       (CASE WHEN i %% 100 = 0 THEN 'dead' WHEN i %% 250 = 7 THEN 'cancelled'
             ELSE 'succeeded' END)::{s}.final_status,
       0, CASE WHEN i %% 100 = 0 THEN 5 ELSE 1 END, 5,
       CASE WHEN i %% 5 = 0 THEN 'tenant-' || (i %% 40) END,
       CASE WHEN i %% 3 = 0 THEN 'key-' || i END,
       t.at - make_interval(secs => 0.2 + (i %% 30)), t.at,
       CASE WHEN i %% 100 = 0
            THEN jsonb_build_object('order_id', i, 'email', 'customer' || i || '@example.com')
       END,
       CASE WHEN i %% 10 = 1 THEN jsonb_build_object('ok', true) END,
       CASE WHEN i %% 100 = 0 THEN 'ConnectionError: smtp.example.com:587 refused' END,
       CASE WHEN i %% 100 = 0 THEN %(traceback)s END,
       CASE WHEN i %% 100 = 0 THEN (
           SELECT jsonb_agg(jsonb_build_object(
               'attempt', a, 'error', 'ConnectionError: smtp.example.com:587 refused',
               'at', t.at - make_interval(secs => 60 * (5 - a)), 'worker', 'web-1:' || a))
           FROM generate_series(1, 5) a)
       END
FROM generate_series(1, %(n)s::bigint) i,
     LATERAL (SELECT now() - make_interval(secs => 86400.0 * (%(n)s - i) / %(n)s) AS at) t
"""

# The queue: 90% due (run_at up to 10 minutes ago: lag), 10% scheduled in the
# future, a few running; ids after the history's.
SEED_QUEUE = """
INSERT INTO {s}.jobs
    (id, name, pool, priority, state, attempt, max_attempts, run_at, enqueued_at,
     claimed_at, worker, tenant, idempotency_key, args)
SELECT i,
       (%(names)s::text[])[1 + (i * 7) %% %(n_names)s],
       (%(pools)s::text[])[1 + i %% 3],
       (i %% 3)::smallint,
       (CASE WHEN i %% 2500 = 0 THEN 'running' ELSE 'pending' END)::{s}.job_state,
       CASE WHEN i %% 2500 = 0 THEN 1 ELSE 0 END, 5,
       CASE WHEN i %% 10 = 0 THEN now() + make_interval(secs => i %% 3600)
            ELSE now() - make_interval(secs => i %% 600) END,
       now() - make_interval(secs => i %% 600),
       CASE WHEN i %% 2500 = 0 THEN now() END,
       CASE WHEN i %% 2500 = 0 THEN 'bench-worker:' || (i %% 4) END,
       CASE WHEN i %% 5 = 0 THEN 'tenant-' || (i %% 40) END,
       CASE WHEN i %% 3 = 0 THEN 'key-' || i END,
       jsonb_build_object('order_id', i, 'note', repeat('x', 40))
FROM generate_series(%(first)s::bigint, %(last)s::bigint) i
"""

TRACEBACK = """Traceback (most recent call last):
  File "/srv/shop/shop/mail.py", line 42, in send_receipt
    smtp.send(message)
  File "/usr/lib/python3.11/smtplib.py", line 341, in connect
    self.sock = self._get_socket(host, port, self.timeout)
ConnectionError: smtp.example.com:587 refused
"""

APP = '''"""The bench's app: two periodic declarations for the periodic page."""
from datetime import timedelta
from queue_runtime import job

@job(pool="batch", every=timedelta(hours=1))
def hourly_cleanup() -> None:
    pass

@job(pool="batch", cron="0 3 * * *")
def nightly_report() -> None:
    pass
'''


@dataclass(frozen=True)
class PageTiming:
    page: str
    path: str
    median_ms: float
    p95_ms: float
    max_ms: float
    first_ms: float  # the page's first request (a warm-up one): caches cold, plans not made
    requests: int
    bytes: int


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--history", type=int, default=1_000_000, help="finished jobs")
    parser.add_argument("--queued", type=int, default=100_000, help="jobs in the queue")
    parser.add_argument("--requests", type=int, default=30, help="timed requests per page")
    parser.add_argument("--warmup", type=int, default=3, help="untimed requests per page first")
    parser.add_argument("--limit-ms", type=float, default=300.0, help="p95 limit per page")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.requests < 20:
        print("error: --requests must be at least 20 (a p95 needs them)", file=sys.stderr)
        return 2
    with bench_database() as settings, tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        started = time.monotonic()
        seed(settings, args.history, args.queued)
        seeded = time.monotonic() - started
        inventory = write_inventory(workdir)
        (workdir / "dashboard_bench_app.py").write_text(APP)
        with dashboard(settings, workdir, inventory) as port:
            timings = [time_page(port, page, path, args) for page, path in pages(settings)]
    print(render(timings, args, seeded))
    slow = [t for t in timings if t.p95_ms > args.limit_ms]
    if args.json:
        report = {"conditions": conditions(args), "pages": [asdict(t) for t in timings]}
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    for t in slow:
        print(f"SLOW: {t.page} ({t.path}) p95 {t.p95_ms:.1f} ms > {args.limit_ms:.0f} ms")
    return 1 if slow else 0


@contextmanager
def bench_database() -> Iterator[Settings]:
    """Settings on a database of our own (dropped afterwards) and a Redis prefix of our own."""
    admin_url = pg_admin_url()
    dbname = f"bench_dashboard_{os.getpid()}"
    admin.create_database(admin_url, dbname)
    print(f"database: {dbname} (dropped at the end)", flush=True)
    prefix = f"bench_dashboard:{os.getpid()}"
    settings = Settings(
        mode=Mode.QUEUE,
        database_url=admin.with_database(admin_url, dbname),
        schema_name="queue",
        redis_url=redis_test_url(),
        redis_prefix=prefix,
    )
    try:
        migrate(settings)
        yield settings
    finally:
        admin.drop_database(admin_url, dbname)
        delete_redis_prefix(redis_test_url(), prefix)


def seed(settings: Settings, history: int, queued: int) -> None:
    """The history, the queue, the sequence past both, statistics; then rollouts and certificates."""
    s = sql.Identifier(settings.schema_name)
    common = {"names": JOB_NAMES, "n_names": len(JOB_NAMES), "pools": POOLS, "rare": RARE_JOB}
    with psycopg.connect(settings.database_url or "", autocommit=True) as conn:
        conn.execute(
            sql.SQL(SEED_HISTORY).format(s=s), {**common, "n": history, "traceback": TRACEBACK}
        )
        bounds = {"first": history + 1, "last": history + queued}
        conn.execute(sql.SQL(SEED_QUEUE).format(s=s), {**common, **bounds})
        table = f"{settings.schema_name}.jobs"
        conn.execute(
            "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", (table, history + queued)
        )
        for name in ("job_history", "jobs"):
            conn.execute(sql.SQL("VACUUM ANALYZE {}.{}").format(s, sql.Identifier(name)))
    seed_gate(settings)


def seed_gate(settings: Settings) -> None:
    """Certifications and rollouts of half the jobs, through the GateStore (audited)."""
    runtime = Runtime(settings)
    try:
        gate = runtime.gate_store
        for i, name in enumerate(JOB_NAMES[:6]):
            figures = {"jobs": 5000, "p95_ms": 41.0 + i, "duplicates": 0}
            gate.insert_certification(name, f"fp{i:04x}", figures, "loadtest@ci")
            mode, percent = (RolloutMode.PERCENT, 25) if i % 2 else (RolloutMode.ASYNC, 100)
            gate.upsert_rollout(name, mode, percent, "bench", "dashboard bench seed")
    finally:
        runtime.close()


def write_inventory(workdir: Path) -> Path:
    """A migrator inventory of the seeded jobs (the JSON ``migrator scan`` writes)."""
    jobs = [
        {
            "qualname": name,
            "location": {"path": f"shop/{name.split('.')[1]}.py", "line": 10 + i},
            "idempotency": VERDICTS[i % len(VERDICTS)],
            "confidence": "high",
        }
        for i, name in enumerate([*JOB_NAMES, RARE_JOB, NEVER_RUN])
    ]
    path = workdir / "inventory.json"
    path.write_text(json.dumps({"root": str(workdir), "jobs": jobs, "sites": []}))
    return path


@contextmanager
def dashboard(settings: Settings, workdir: Path, inventory: Path) -> Iterator[int]:
    """``queue-runtime dashboard`` on a free port, with the bench app's jobs; stopped by PID."""
    port = free_port()
    flags = [
        "--database-url",
        settings.database_url or "",
        "--schema",
        settings.schema_name,
        "--redis-url",
        settings.redis_url or "",
        "--redis-prefix",
        settings.redis_prefix,
        "--log-level",
        "WARNING",
    ]
    cli = [sys.executable, "-m", "queue_runtime.cli", *flags]
    web = [
        *cli,
        "dashboard",
        "--port",
        str(port),
        f"--token={TOKEN}",
        "--inventory",
        str(inventory),
    ]
    web += ["--app", "dashboard_bench_app"]
    env = {**os.environ, "PYTHONPATH": str(workdir)}
    with (workdir / "dashboard.log").open("wb") as log:
        proc = subprocess.Popen(web, cwd=workdir, env=env, stdout=log, stderr=log)
    try:
        wait_until(
            lambda: _answers(port, proc, workdir), timeout=60, message="the dashboard to answer"
        )
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _answers(port: int, proc: subprocess.Popen[bytes], workdir: Path) -> bool:
    if proc.poll() is not None:
        log = (workdir / "dashboard.log").read_text()
        raise RuntimeError(f"the dashboard exited with status {proc.returncode}:\n{log}")
    try:
        status, _ = get(http.client.HTTPConnection("127.0.0.1", port, timeout=5), "/")
    except OSError:
        return False
    return status == 200


def pages(settings: Settings) -> list[tuple[str, str]]:
    """Every page, and the job lists at their most expensive: deep pages, rare names, filters."""
    with psycopg.connect(settings.database_url or "") as conn:
        s = sql.Identifier(settings.schema_name)
        dead = conn.execute(
            sql.SQL("SELECT max(id) FROM {}.job_history WHERE status = 'dead'").format(s)
        ).fetchone()
        queued = conn.execute(sql.SQL("SELECT min(id) FROM {}.jobs").format(s)).fetchone()
    dead_id, queued_id = (dead or [0])[0], (queued or [0])[0]
    middle = 500_000
    return [
        ("overview", "/"),
        ("overview fragment", "/fragments/overview"),
        ("jobs", "/jobs"),
        ("jobs queued", "/jobs?state=queued"),
        ("jobs succeeded", "/jobs?state=succeeded"),
        ("jobs dead", "/jobs?state=dead"),
        ("jobs by name", f"/jobs?job={JOB_NAMES[0]}"),
        ("jobs rare name", f"/jobs?job={RARE_JOB}&state=succeeded"),
        ("jobs cancelled", "/jobs?state=cancelled"),
        ("jobs never run", f"/jobs?job={NEVER_RUN}"),
        ("jobs never run deep", f"/jobs?job={NEVER_RUN}&after={middle}"),
        ("jobs none dead", f"/jobs?job={RARE_JOB}&state=dead"),
        ("jobs deep page", f"/jobs?after={middle}"),
        ("jobs dead deep", f"/jobs?state=dead&after={middle}"),
        ("job (dead)", f"/jobs/{dead_id}"),
        ("job (queued)", f"/jobs/{queued_id}"),
        ("dead", "/dead"),
        ("dead by name", f"/dead?job={JOB_NAMES[0]}"),
        ("dead none", f"/dead?job={RARE_JOB}"),
        ("jobs search args", "/jobs?q=customer123"),
        ("jobs search none", "/jobs?q=no-such-value"),
        ("jobs search deep", f"/jobs?q=no-such-value&after={middle}"),
        ("jobs retrying", "/jobs?state=retrying"),
        ("jobs scheduled", "/jobs?state=scheduled"),
        ("by job (1 h)", "/stats"),
        ("by job (24 h)", "/stats?hours=24"),
        ("migration", "/migration"),
        ("workers", "/workers"),
        ("periodic", "/periodic"),
    ]


def get(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}"})
    response = conn.getresponse()
    return response.status, response.read()


def time_page(port: int, page: str, path: str, args: argparse.Namespace) -> PageTiming:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        size = 0
        first = 0.0
        for i in range(args.warmup):
            started = time.perf_counter()
            _expect_ok(page, *get(conn, path))
            first = first if i else (time.perf_counter() - started) * 1000
        samples = []
        for _ in range(args.requests):
            started = time.perf_counter()
            status, body = get(conn, path)
            samples.append((time.perf_counter() - started) * 1000)
            _expect_ok(page, status, body)
            size = len(body)
    finally:
        conn.close()
    samples.sort()
    p95 = samples[max(0, round(0.95 * len(samples)) - 1)]
    median = statistics.median(samples)
    return PageTiming(page, path, median, p95, samples[-1], first, len(samples), size)


def _expect_ok(page: str, status: int, body: bytes) -> None:
    if status != 200:
        raise RuntimeError(f"{page}: HTTP {status}: {body[:300]!r}")


def render(timings: list[PageTiming], args: argparse.Namespace, seeded: float) -> str:
    head = (
        f"dashboard pages, {args.history:,} jobs in history, {args.queued:,} queued "
        f"(seeded in {seeded:.0f} s); {args.requests} timed requests each after "
        f"{args.warmup} warm-up; limit p95 <= {args.limit_ms:.0f} ms"
    )
    lines = [
        head,
        "",
        f"{'page':<20} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'first ms':>9} {'KiB':>6}  path",
    ]
    for t in timings:
        flag = "" if t.p95_ms <= args.limit_ms else "  SLOW"
        lines.append(
            f"{t.page:<20} {t.median_ms:>10.1f} {t.p95_ms:>8.1f} {t.max_ms:>8.1f} "
            f"{t.first_ms:>9.1f} {t.bytes / 1024:>6.1f}  {t.path}{flag}"
        )
    return "\n".join(lines)


def conditions(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "history": args.history,
        "queued": args.queued,
        "requests": args.requests,
        "warmup": args.warmup,
        "limit_ms": args.limit_ms,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }


if __name__ == "__main__":
    sys.exit(main())
