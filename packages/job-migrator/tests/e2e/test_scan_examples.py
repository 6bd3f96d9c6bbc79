"""Acceptance test of the analyzer: the inventory each example project must give.

The expectations come from what the code does (see examples/shop/README.md
and the comments in tests/fixtures), not from what the scanner happens to
output. Each fixture is scanned in a temporary copy, so that the scan's
``.migrator/`` folder never lands in the repository.

A site is expected at the line where its call (or decorator) starts;
``start_lines`` lists other acceptable lines, relative to that one (a
``Process(...)`` started on a later line, a function under its decorator).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from inventory import scan
from inventory.models import (
    CallSite,
    Effect,
    EffectKind,
    Framework,
    Idempotency,
    Inventory,
    Job,
    Pattern,
    ScanErrorKind,
)

REPO = Path(__file__).resolve().parents[4]
SHOP = REPO / "examples" / "shop"
FIXTURES = REPO / "packages" / "job-migrator" / "tests" / "fixtures"
COPY_IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache"
)

IDEM, KEY, NON = Idempotency.IDEMPOTENT, Idempotency.NEEDS_KEY, Idempotency.NON_IDEMPOTENT
UNSAFE, UNKNOWN = Idempotency.UNSAFE, Idempotency.UNKNOWN
FASTAPI, DJANGO, FLASK = Framework.FASTAPI, Framework.DJANGO, Framework.FLASK


@dataclass(frozen=True)
class Site:
    path: str
    pattern: Pattern
    job: str
    needle: str  # unique text on the line where the site starts
    verdict: Idempotency
    handler: Framework | None = None
    result_used: bool | None = None  # None: not asserted
    start_lines: tuple[int, ...] = ()

    def lines(self, root: Path) -> set[int]:
        text = (root / self.path).read_text(encoding="utf-8").splitlines()
        found = [n for n, line in enumerate(text, start=1) if self.needle in line]
        assert len(found) == 1, f"needle {self.needle!r} is not unique in {self.path}: {found}"
        return {found[0], *(found[0] + delta for delta in self.start_lines)}

    @property
    def key(self) -> tuple[str, Pattern, str]:
        return (self.path, self.pattern, self.job)


ORDERS, PRODUCTS = "shop/routes/orders.py", "shop/routes/products.py"
USERS, REPORTS = "shop/routes/users.py", "shop/routes/reports.py"
# fmt: off
SHOP_SITES = [
    Site(ORDERS, Pattern.DIRECT_CALL, "shop.mail.send_receipt", "    send_receipt(order_id)", NON, FASTAPI, False),
    Site(ORDERS, Pattern.THREAD, "shop.jobs.audit.write_audit", "Thread(target=write_audit", NON, FASTAPI, False),
    Site(ORDERS, Pattern.THREAD, "shop.jobs.stock.decrement_stock", "Worker(target=decrement_stock", UNSAFE, FASTAPI, False),
    Site(PRODUCTS, Pattern.THREAD, "shop.jobs.cache.CacheWarmer.run", "CacheWarmer(product.id).start()", IDEM, FASTAPI, False),
    Site(USERS, Pattern.EXECUTOR_SUBMIT, "shop.mail.send_welcome", "EXECUTOR.submit(send_welcome", NON, FASTAPI, False),
    Site(PRODUCTS, Pattern.EXECUTOR_SUBMIT, "shop.images.make_thumbnail", "EXECUTOR.map(make_thumbnail", IDEM, FASTAPI, False),
    Site(PRODUCTS, Pattern.ASYNCIO_TASK, "shop.analytics.record_page_view", "create_task(record_page_view", NON, FASTAPI),
    Site(ORDERS, Pattern.RUN_IN_EXECUTOR, "shop.payments.capture_payment", "to_thread(capture_payment", KEY, FASTAPI, True),
    Site(REPORTS, Pattern.RUN_IN_EXECUTOR, "shop.reports.export_daily_report", "run_in_executor(None, export_daily_report", IDEM, FASTAPI, False),
    Site(ORDERS, Pattern.BACKGROUND_TASKS, "shop.payments.refund_payment", "add_task(refund_payment", UNSAFE, FASTAPI, False),
    Site(ORDERS, Pattern.BACKGROUND_TASKS, "shop.plugins.run_hook", "partial(run_hook", UNKNOWN, FASTAPI, False, (-1,)),
    Site(PRODUCTS, Pattern.BACKGROUND_TASKS, "shop.jobs.cache.warm_product_cache", "add_task(lambda: warm_product_cache", IDEM, FASTAPI, False),
    Site(REPORTS, Pattern.PROCESS, "shop.reports.rebuild_reports", "multiprocessing.Process(", IDEM, FASTAPI, None, (3,)),
    Site("shop/cron.py", Pattern.SCHEDULER, "shop.jobs.cache.warm_all_product_caches", ".do(warm_all_product_caches)", IDEM),
]

DJANGO_SITES = [
    Site("accounts/views.py", Pattern.ON_COMMIT, "accounts.emails.send_welcome", "on_commit(lambda: send_welcome", NON, DJANGO),
    Site("orders/views.py", Pattern.ON_COMMIT, "orders.services.award_loyalty_points", "on_commit(partial(award_loyalty_points", NON, DJANGO),
    Site("orders/signals.py", Pattern.SIGNAL_RECEIVER, "orders.signals.order_saved", "@receiver(post_save, sender=Order)", NON, None, None, (1,)),
    Site("accounts/signals.py", Pattern.SIGNAL_RECEIVER, "accounts.signals.sync_profile", "post_save.connect(sync_profile", IDEM),
    Site("orders/views.py", Pattern.DIRECT_CALL, "orders.emails.send_order_confirmation", "    send_order_confirmation(pk)", NON, DJANGO, False),
    Site("orders/views.py", Pattern.DIRECT_CALL, "orders.warehouse.notify_warehouse", "    notify_warehouse(pk)", NON, DJANGO, False),
    Site("orders/views.py", Pattern.THREAD, "orders.catalog.import_catalog", "Thread(target=import_catalog", KEY, DJANGO, False),
]

FLASK_SITES = [
    Site("app.py", Pattern.THREAD, "tasks.send_welcome_email", "Thread(target=send_welcome_email", NON, FLASK, False),
    Site("app.py", Pattern.EXECUTOR_SUBMIT, "tasks.resize_image", "executor.submit(resize_image", IDEM, FLASK, False),
    Site("app.py", Pattern.EXECUTOR_SUBMIT, "tasks.charge_card", "executor.submit(charge_card", UNSAFE, FLASK, False),
    Site("scheduler.py", Pattern.SCHEDULER, "tasks.refresh_exchange_rates", "sched.add_job(refresh_exchange_rates", IDEM),
    Site("scheduler.py", Pattern.SCHEDULER, "scheduler.nightly_report", '@sched.scheduled_job("cron"', IDEM, None, None, (1,)),
    Site("scheduler.py", Pattern.SCHEDULER, "tasks.send_digest", ".do(send_digest)", NON),
]

BAD_INPUT_SITES = [
    Site("good.py", Pattern.THREAD, "good.rebuild_index", "Thread(target=rebuild_index", IDEM, None, False),
]
# fmt: on
BAD_INPUT_ERRORS = {
    ("broken.py", ScanErrorKind.SYNTAX),
    ("latin1.py", ScanErrorKind.ENCODING),
    ("messages_pb2.py", ScanErrorKind.GENERATED),
    ("schema_gen.py", ScanErrorKind.GENERATED),
    ("loop", ScanErrorKind.SYMLINK_LOOP),
}

PROJECTS = {"shop": SHOP_SITES, "django_app": DJANGO_SITES, "flask_app": FLASK_SITES}
ALL_SITES = [(project, site) for project, sites in PROJECTS.items() for site in sites]


def _site_id(value: object) -> str:
    return f"{value.job}@{value.pattern}" if isinstance(value, Site) else str(value)


def _copy(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, symlinks=True, ignore=COPY_IGNORE)
    return dest


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Inventory]]:
    """Each project scanned once, from scratch, in a temporary copy."""
    base = tmp_path_factory.mktemp("scan")
    sources = {
        "shop": SHOP,
        **{name: FIXTURES / name for name in ("django_app", "flask_app", "negatives")},
    }
    copies = {name: _copy(src, base / name) for name, src in sources.items()}
    bad = _copy(FIXTURES / "bad_input", base / "bad_input")
    os.symlink(bad, bad / "loop", target_is_directory=True)  # a link back to its own ancestor
    copies["bad_input"] = bad
    return {name: (root, scan(root, use_cache=False)) for name, root in copies.items()}


def _matching(inventory: Inventory, site: Site) -> list[CallSite]:
    return [s for s in inventory.sites if (s.location.path, s.pattern, s.job) == site.key]


def _one(inventory: Inventory, site: Site) -> CallSite:
    found = _matching(inventory, site)
    assert len(found) == 1, (
        f"expected one {site.key}, got {_describe(found)}; all: {_describe(inventory.sites)}"
    )
    return found[0]


def _job(inventory: Inventory, qualname: str) -> Job:
    job = inventory.job(qualname)
    assert job is not None, f"job {qualname} missing from the inventory's jobs"
    return job


def _describe(sites: list[CallSite]) -> list[str]:
    return [
        f"{s.location.path}:{s.location.line} {s.pattern} {s.job} ({s.idempotency})" for s in sites
    ]


@pytest.mark.parametrize(("project", "site"), ALL_SITES, ids=_site_id)
def test_expected_site_is_found_where_it_is(scanned, project, site):
    root, inventory = scanned[project]
    assert _one(inventory, site).location.line in site.lines(root)


@pytest.mark.parametrize(("project", "site"), ALL_SITES, ids=_site_id)
def test_expected_site_has_its_verdict_handler_and_result_use(scanned, project, site):
    _, inventory = scanned[project]
    found = _one(inventory, site)
    assert (found.idempotency, _job(inventory, site.job).idempotency) == (
        site.verdict,
        site.verdict,
    )
    assert found.handler == site.handler
    if site.result_used is not None:
        assert found.result_used is site.result_used


@pytest.mark.parametrize("project", [*PROJECTS, "bad_input"])
def test_no_unexpected_sites(scanned, project):
    _, inventory = scanned[project]
    expected = {site.key for site in PROJECTS.get(project, BAD_INPUT_SITES)}
    extra = [s for s in inventory.sites if (s.location.path, s.pattern, s.job) not in expected]
    assert _describe(extra) == []


def test_negatives_give_no_sites_and_no_errors(scanned):
    _, inventory = scanned["negatives"]
    assert _describe(inventory.sites) == []
    assert inventory.errors == []
    assert inventory.stats.files_scanned == 4


def test_well_formed_projects_have_no_errors(scanned):
    for project in PROJECTS:
        assert scanned[project][1].errors == [], project


def test_bad_input_is_reported_by_kind_and_the_good_file_still_scanned(scanned):
    _, inventory = scanned["bad_input"]
    assert {(e.path, e.kind) for e in inventory.errors} == BAD_INPUT_ERRORS
    assert [s.job for s in inventory.sites] == ["good.rebuild_index"]


def _effects(inventory: Inventory, qualname: str) -> list[Effect]:
    return _job(inventory, qualname).effects


SHOP_EFFECTS = [
    ("shop.mail.send_receipt", EffectKind.EMAIL_SEND),
    ("shop.mail.send_welcome", EffectKind.EMAIL_SEND),
    ("shop.analytics.record_page_view", EffectKind.DB_INCREMENT),
    ("shop.jobs.stock.decrement_stock", EffectKind.ACCOUNT_STATE),
    ("shop.jobs.audit.write_audit", EffectKind.DB_INSERT),
    ("shop.images.make_thumbnail", EffectKind.FILE_WRITE),
    ("shop.reports.export_daily_report", EffectKind.FILE_WRITE),
    ("shop.plugins.run_hook", EffectKind.DYNAMIC_CALL),
    ("shop.payments.capture_payment", EffectKind.PAYMENT),
    ("shop.payments.refund_payment", EffectKind.PAYMENT),
]


@pytest.mark.parametrize(("job", "kind"), SHOP_EFFECTS, ids=lambda v: str(v))
def test_shop_job_has_its_effect(scanned, job, kind):
    _, inventory = scanned["shop"]
    assert kind in {e.kind for e in _effects(inventory, job)}


def test_shop_mail_is_found_two_calls_deep_with_its_chain(scanned):
    _, inventory = scanned["shop"]
    effects = _effects(inventory, "shop.mail.send_receipt")
    mails = [e for e in effects if e.kind == EffectKind.EMAIL_SEND]
    assert mails and all("shop.mail.deliver" in e.chain for e in mails), mails


def test_shop_payment_keys(scanned):
    _, inv = scanned["shop"]
    capture = [
        e for e in _effects(inv, "shop.payments.capture_payment") if e.kind == EffectKind.PAYMENT
    ]
    refund = [
        e for e in _effects(inv, "shop.payments.refund_payment") if e.kind == EffectKind.PAYMENT
    ]
    assert capture and all(e.keyed for e in capture), capture
    assert refund and not any(e.keyed for e in refund), refund


def test_shop_job_facts(scanned):
    _, inv = scanned["shop"]
    assert _job(inv, "shop.analytics.record_page_view").is_async is True
    assert _job(inv, "shop.payments.capture_payment").parameters == ["order_id"]
    assert _job(inv, "shop.payments.refund_payment").parameters == ["order_id", "amount_cents"]


def test_cli_scan_writes_the_same_inventory_as_json(scanned, tmp_path):
    root, library = scanned["shop"]
    out = tmp_path / "inventory.json"
    cli = Path(sys.executable).with_name("migrator")
    done = subprocess.run(
        [str(cli), "scan", str(root), "--format", "json", "-o", str(out), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    from_cli = Inventory.model_validate(json.loads(out.read_text(encoding="utf-8")))

    def summary(inventory: Inventory) -> list[tuple[object, ...]]:
        return sorted(
            (s.location.path, s.location.line, s.pattern, s.job, s.idempotency)
            for s in inventory.sites
        )

    assert from_cli.sites, "the CLI reported no sites"
    assert summary(from_cli) == summary(library)
