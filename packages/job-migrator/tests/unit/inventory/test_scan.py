"""inventory.scan end to end on small trees: real extractor, real classifier."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, ScanErrorKind, scan
from inventory._scan import _pool
from inventory._scan._cache import cache_path
from inventory._scan._store import store_path

APP = {
    "shop/__init__.py": "",
    "shop/billing.py": """\
import stripe


def refund_order(order_id):
    stripe.Refund.create(charge=order_id)
""",
    "shop/mail.py": """\
from django.core.mail import send_mail


def send_receipt(order_id):
    send_mail("Receipt", f"order {order_id}", "shop@example.com", ["a@example.com"])
""",
    "shop/views.py": """\
import threading

from shop.billing import refund_order
from shop.mail import send_receipt


def refund_view(request, order_id):
    threading.Thread(target=refund_order, args=(order_id,)).start()
    return "ok"


def receipt_view(request, order_id):
    threading.Thread(target=send_receipt, args=(order_id,)).start()
""",
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def verdicts(inventory: Inventory) -> dict[str, Idempotency]:
    return {job.qualname: job.idempotency for job in inventory.jobs}


def findings(inventory: Inventory) -> list[tuple[str, str, int, str]]:
    return [(s.job, s.location.path, s.location.line, s.fingerprint) for s in inventory.sites]


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "app", APP)


def test_scan_finds_jobs_classifies_them_and_writes_the_inventory(app: Path) -> None:
    inventory = scan(app)
    assert verdicts(inventory) == {
        "shop.billing.refund_order": Idempotency.UNSAFE,
        "shop.mail.send_receipt": Idempotency.NON_IDEMPOTENT,
    }
    assert [(job, path, line) for job, path, line, _ in findings(inventory)] == [
        ("shop.billing.refund_order", "shop/views.py", 8),
        ("shop.mail.send_receipt", "shop/views.py", 13),
    ]
    written = json.loads((app / ".migrator" / "inventory.json").read_text(encoding="utf-8"))
    assert Inventory.model_validate(written) == inventory
    assert (inventory.root, inventory.stats.files_scanned, inventory.errors) == (str(app), 4, [])
    assert 23 <= inventory.stats.lines <= 27  # 23 newlines in 4 files
    views = (app / "shop" / "views.py").read_bytes()
    assert inventory.file_hashes["shop/views.py"] == hashlib.sha256(views).hexdigest()
    assert sorted(inventory.file_hashes) == sorted(APP)


def test_warm_scan_reuses_every_summary_and_gives_the_same_answer(app: Path) -> None:
    cold = scan(app)
    warm = scan(app)
    assert (cold.stats.files_cached, warm.stats.files_cached) == (0, 4)
    assert findings(warm) == findings(cold) and warm.jobs == cold.jobs


def test_an_edit_is_seen_and_only_the_edited_file_is_read_again(app: Path) -> None:
    scan(app)
    (app / "shop" / "billing.py").write_text(
        "import stripe\n\n\ndef refund_order(order_id):\n"
        "    stripe.Refund.create(charge=order_id, idempotency_key=f'refund-{order_id}')\n",
        encoding="utf-8",
    )
    inventory = scan(app)
    assert inventory.stats.files_cached == 3
    assert verdicts(inventory)["shop.billing.refund_order"] == Idempotency.NEEDS_KEY


def test_fingerprints_survive_lines_inserted_above_a_site(app: Path) -> None:
    before = {job: fp for job, _, _, fp in findings(scan(app))}
    views = app / "shop" / "views.py"
    views.write_text("# a comment\n\n\n" + views.read_text(encoding="utf-8"), encoding="utf-8")
    after = scan(app)
    assert [line for _, _, line, _ in findings(after)] == [11, 16]
    assert {job: fp for job, _, _, fp in findings(after)} == before


def test_bad_files_are_reported_and_the_scan_goes_on(app: Path) -> None:
    write_tree(
        app, {"shop/broken.py": "def f(:\n", "shop/legacy.py": "# coding: latin-1\nx = 'é'\n"}
    )
    (app / "shop" / "raw.py").write_bytes(b"x = '\xe9'\n")
    (app / "shop" / "api_pb2.py").write_text("x = 1\n", encoding="utf-8")
    inventory = scan(app)
    errors = {(e.path, e.kind) for e in inventory.errors}
    assert errors == {
        ("shop/broken.py", ScanErrorKind.SYNTAX),
        ("shop/raw.py", ScanErrorKind.ENCODING),
        ("shop/api_pb2.py", ScanErrorKind.GENERATED),
    }
    assert len(inventory.jobs) == 2 and inventory.stats.files_skipped == 3
    assert scan(app).errors == inventory.errors  # failures come back from the cache too


def test_max_file_size_from_pyproject(app: Path) -> None:
    write_tree(app, {"pyproject.toml": "[tool.migrator]\nmax_file_size = 200\n"})
    inventory = scan(app)
    too_large = sorted(e.path for e in inventory.errors if e.kind == ScanErrorKind.TOO_LARGE)
    assert too_large == ["shop/views.py"]


def test_parallel_and_serial_scans_agree(tmp_path: Path) -> None:
    files = dict(APP)
    for number in range(45):
        files[f"shop/extra_{number}.py"] = f"def helper_{number}(x):\n    return x + {number}\n"
    app = write_tree(tmp_path / "big", files)
    seen: list[tuple[int, int]] = []
    parallel = scan(
        app, use_cache=False, jobs=2, progress=lambda done, total: seen.append((done, total))
    )
    serial = scan(app, use_cache=False, jobs=1)
    assert findings(parallel) == findings(serial) and parallel.jobs == serial.jobs
    assert parallel.stats.files_scanned == 49 and seen[-1] == (49, 49)
    # use_cache=False neither reads nor writes the cache
    assert not cache_path(app, "index").exists() and not store_path(app).exists()


def test_test_code_is_scanned_only_when_asked(app: Path) -> None:
    write_tree(app, {"tests/test_views.py": APP["shop/views.py"]})
    assert scan(app).stats.files_scanned == 4
    with_tests = scan(app, include_tests=True)
    assert with_tests.stats.files_scanned == 5
    assert sorted({s.location.path for s in with_tests.sites}) == [
        "shop/views.py",
        "tests/test_views.py",
    ]


def _dying_worker(files: object, max_bytes: int) -> list[object]:
    os._exit(3)  # a worker killed mid-chunk (out of memory, SIGKILL)


def test_a_dead_worker_pool_finishes_the_scan_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = dict(APP) | {f"shop/extra_{n}.py": f"X = {n}\n" for n in range(45)}
    app = write_tree(tmp_path / "big", files)
    monkeypatch.setattr(_pool, "summarise_chunk", _dying_worker)
    in_process: list[int] = []
    serial = _pool._serial
    monkeypatch.setattr(
        _pool, "_serial", lambda rest, *a: in_process.append(len(rest)) or serial(rest, *a)
    )
    inventory = scan(app, use_cache=False, jobs=2)
    assert in_process == [49]  # every file, since no chunk came back
    assert inventory.stats.files_scanned == 49 and inventory.errors == []
    assert verdicts(inventory)["shop.billing.refund_order"] == Idempotency.UNSAFE


def test_a_missing_root_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        scan(tmp_path / "typo")
    assert list(tmp_path.iterdir()) == []


def test_the_cyclic_collector_is_paused_while_a_scan_runs_and_restored_after(
    tmp_path: Path,
) -> None:
    """The scan builds large acyclic graphs (summaries, traces): with the collector on it
    walked the growing heap again and again (Django, one edited file: 3.7 s, paused 2.0 s).
    A cold, a warm and an edited scan each let at most the one collection run that the
    allocations pending when the collector is back on trigger (there were dozens), and the
    interpreter is as it was after it, also when the scan fails."""
    import gc
    import sys

    many = {
        f"shop/m{i}.py": APP["shop/views.py"].replace("refund_view", f"v{i}") for i in range(60)
    }
    root = write_tree(tmp_path / "app", {**APP, **many})
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections[-1] += 1

    limit = sys.getrecursionlimit()
    gc.callbacks.append(count)
    try:
        for cached in (False, True, True):  # cold, warm, and after the edit below
            collections.append(0)
            inventory = scan(root, use_cache=cached, jobs=1)
            assert len(inventory.sites) >= 60
            (root / "shop" / "m0.py").write_text(APP["shop/views.py"] + "\n# edited\n")
        with pytest.raises(NotADirectoryError):
            scan(root / "missing")
    finally:
        gc.callbacks.remove(count)
    assert all(n <= 1 for n in collections), collections
    assert gc.isenabled()
    assert sys.getrecursionlimit() == limit
