"""``migrator plan`` on a copy of examples/shop: every job in its phase, --check against real servers.

The copy is scanned with the real CLI; ``--check`` runs against the shared
PostgreSQL and Redis with a schema and key prefix of its own
(``qr_plan_<random>``), dropped and deleted afterwards (SCAN, never FLUSHALL).
"""

from __future__ import annotations

import secrets
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg
import pytest
import redis
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from migrator.plan import parse_markdown
from queue_runtime import Settings, downgrade, migrate
from tests.support import free_port, pg_admin_url, redis_test_url

REPO = Path(__file__).resolve().parents[4]
SHOP = REPO / "examples" / "shop"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache"
)
PHASES = {
    "phase-1": {
        "shop.images.make_thumbnail",
        "shop.jobs.cache.CacheWarmer.run",
        "shop.jobs.cache.warm_all_product_caches",
        "shop.jobs.cache.warm_product_cache",
        "shop.reports.export_daily_report",
        "shop.reports.rebuild_reports",
    },
    # the mail jobs are on the notification fast track: right after the idempotent jobs
    "phase-2": {
        "shop.payments.capture_payment",
        "shop.mail.send_receipt",
        "shop.mail.send_welcome",
    },
    "phase-3": {
        "shop.analytics.record_page_view",
        "shop.jobs.audit.write_audit",
    },
    "phase-4": {"shop.payments.refund_payment", "shop.jobs.stock.decrement_stock"},
    "unknown": {"shop.plugins.run_hook"},
}


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def sections(text: str) -> dict[str, str]:
    """Phase id -> the text of its section."""
    out: dict[str, str] = {}
    for chunk in text.split("\n## ")[1:]:
        heading = chunk.splitlines()[0]
        anchor = heading.rsplit("<!-- plan:", 1)[1].removesuffix(" -->")
        out[anchor] = chunk
    return out


def box(text: str, item: str) -> str:
    """'x' or ' ' for the item's checkbox in the file."""
    line = next(line for line in text.splitlines() if line.endswith(f"<!-- plan:{item} -->"))
    return line.split("[", 1)[1][0]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plan") / "shop"
    shutil.copytree(SHOP, root, ignore=IGNORE)
    code, output = cli("scan", str(root), "--no-cache")
    assert code == 0, output
    assert (root / ".migrator" / "inventory.json").is_file()
    return root


def test_plan_without_an_inventory_says_to_scan_first(tmp_path: Path) -> None:
    code, output = cli("plan", str(tmp_path))
    assert code == 2
    assert "migrator scan" in output
    assert not (tmp_path / "MIGRATION_PLAN.md").exists()


def test_every_shop_job_is_in_its_phase(shop: Path) -> None:
    code, output = cli("plan", str(shop))
    assert code == 0, output
    assert "Phase 0: prerequisites" in output and "MIGRATION_PLAN.md" in output
    text = (shop / "MIGRATION_PLAN.md").read_text()
    found = sections(text)
    for phase, jobs in PHASES.items():
        for job in jobs:
            assert f"<!-- plan:{job}/" in found[phase], (job, phase)
            others = [p for p in PHASES if p != phase]
            assert all(f"<!-- plan:{job}/" not in found[p] for p in others), job
    assert "migrator apply --job shop.images.make_thumbnail" in found["phase-1"]
    # capture_payment: the key comes from the evidence (what it already passes the gateway).
    assert "Declare the idempotency key `capture-{order_id}`" in found["phase-2"]
    assert found["phase-4"].count("Sign-off: ____ (name, date)") == 2
    assert "HOOKS[event](payload)" in found["unknown"]
    # Phase 1 starts with the high-confidence job.
    first = next(line for line in found["phase-1"].splitlines() if line.startswith("- ["))
    assert "shop.images.make_thumbnail" in first


@pytest.fixture
def queue(shop: Path) -> Iterator[tuple[Path, Settings]]:
    """A private schema (migrated) and prefix, configured in the shop copy's pyproject."""
    name = f"qr_plan_{secrets.token_hex(4)}"
    pyproject = shop / "pyproject.toml"
    original = pyproject.read_text()
    pyproject.write_text(
        original
        + f'\n[tool.queue_runtime]\ndatabase_url = "{pg_admin_url()}"\nredis_url = "{redis_test_url()}"\n'
        + f'schema = "{name}"\nredis_prefix = "{name}"\ndefault_pool = "batch"\n'
        + f'\n[tool.migrator.plan]\nmetrics_url = "http://127.0.0.1:{free_port()}/metrics"\n'
    )
    settings = Settings(
        database_url=pg_admin_url(), redis_url=redis_test_url(), schema=name, redis_prefix=name
    )
    try:
        migrate(settings)
        yield shop, settings
    finally:
        pyproject.write_text(original)
        (shop / "MIGRATION_PLAN.md").unlink(missing_ok=True)
        with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))
        client = redis.Redis.from_url(redis_test_url())
        try:
            leftovers = list(client.scan_iter(match=f"{name}:*", count=500))
            if leftovers:
                client.delete(*leftovers)
        finally:
            client.close()
        assert not leftovers, f"--check left Redis keys behind: {leftovers}"


@pytest.mark.pg
@pytest.mark.redis
def test_check_ticks_what_is_in_place_and_nothing_else(queue: tuple[Path, Settings]) -> None:
    shop, _ = queue
    code, output = cli("plan", str(shop), "--check")
    assert code == 1, output  # metrics and runbooks are not in place
    text = (shop / "MIGRATION_PLAN.md").read_text()
    assert box(text, "prereq/schema") == "x"
    assert box(text, "prereq/dlq") == "x"
    assert box(text, "prereq/leases") == "x"
    assert box(text, "prereq/retry") == "x"
    assert box(text, "prereq/pools") == "x"
    assert box(text, "prereq/metrics") == " "
    assert box(text, "prereq/runbooks") == " "
    evidence = parse_markdown(text).evidence
    assert "did not answer" in evidence["prereq/metrics"]
    assert "the alembic head" in evidence["prereq/schema"]
    # The gate's steps are checked too: nothing is guarded, certified or rolled out yet.
    gated = [i for i in evidence if i.endswith(("/guard", "/loadtest", "/rollout"))]
    assert gated
    for item_id in gated:
        assert box(text, item_id) == " ", item_id
        assert evidence[item_id].startswith("checked "), evidence[item_id]
    assert any("no valid certification" in evidence[i] for i in gated if i.endswith("/loadtest"))


@pytest.mark.pg
@pytest.mark.redis
def test_check_passes_with_metrics_and_runbooks_and_keeps_notes(
    queue: tuple[Path, Settings],
) -> None:
    shop, _ = queue
    shutil.copytree(REPO / "docs" / "runbooks", shop / "docs" / "runbooks", dirs_exist_ok=True)
    with metrics_endpoint() as url:
        code, output = cli("plan", str(shop), "--check", "--metrics-url", url)
        assert code == 0, output
        text = (shop / "MIGRATION_PLAN.md").read_text()
        assert box(text, "prereq/metrics") == "x" and box(text, "prereq/runbooks") == "x"
        # A human writes a note and signs off; a re-check keeps both.
        text = text.replace(
            "- [ ] Sign-off: ____ (name, date) <!-- plan:shop.payments.refund_payment/signoff -->",
            "- [ ] Sign-off: Ana Lopez, 2026-12-01 <!-- plan:shop.payments.refund_payment/signoff -->\n"
            "  Ana: reviewed with finance.",
        )
        (shop / "MIGRATION_PLAN.md").write_text(text)
        code, output = cli("plan", str(shop), "--check", "--metrics-url", url)
        assert code == 0, output
    again = (shop / "MIGRATION_PLAN.md").read_text()
    assert "- [x] Sign-off: Ana Lopez, 2026-12-01" in again
    assert "  Ana: reviewed with finance." in again
    shutil.rmtree(shop / "docs")


@pytest.mark.pg
@pytest.mark.redis
def test_check_unticks_the_schema_of_an_unmigrated_database(
    queue: tuple[Path, Settings],
) -> None:
    shop, settings = queue
    downgrade(settings, "base")
    code, output = cli("plan", str(shop), "--check")
    assert code == 1, output
    text = (shop / "MIGRATION_PLAN.md").read_text()
    assert box(text, "prereq/schema") == " "
    assert box(text, "prereq/dlq") == " "
    assert box(text, "prereq/leases") == "x"
    evidence = parse_markdown(text).evidence
    assert "head is" in evidence["prereq/schema"] or "not migrated" in evidence["prereq/schema"]


class _Metrics(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'# TYPE queue_depth gauge\nqueue_depth{pool="batch"} 0.0\n'
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@contextmanager
def metrics_endpoint() -> Iterator[str]:
    """A stand-in for a worker's --metrics-port endpoint."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
