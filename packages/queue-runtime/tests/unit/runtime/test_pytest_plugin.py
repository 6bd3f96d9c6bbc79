"""The pytest plugin, as a migrated app's suite meets it: a pytest run in a subprocess.

The app's ``pyproject.toml`` names a database nobody listens on: a test that
touched it would fail at once. Inline mode runs jobs at enqueue with a key
space per test; manual mode holds them for ``enqueued_jobs`` /
``assert_enqueued`` / ``drain``; ``real=True``, an explicit ``configure()``, the
ini option and a real-queue environment each get out of the plugin's way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from queue_runtime.testing import free_port

APP = """
from queue_runtime import job

RUNS = []


@job(pool="batch", idempotent=True)
def add(a: int, b: int) -> int:
    RUNS.append((a, b))
    return a + b


@job(pool="batch", idempotency="non_idempotent")
def send_receipt(order_id: int, email: str) -> str:
    RUNS.append(("receipt", order_id))
    return f"sent {order_id}"


@job(pool="batch", idempotent=True)
def fan_out(n: int) -> int:
    for i in range(n):
        add.enqueue(i, i)
    return n
"""

TESTS = """
import pytest

import queue_runtime
from queue_runtime.handle import InlineHandle
from queue_runtime.testing import assert_enqueued, drain, enqueued_jobs

import app


@pytest.fixture(autouse=True)
def fresh_runs():
    app.RUNS.clear()


def test_inline_runs_at_enqueue():
    handle = app.add.enqueue(1, 2)
    assert isinstance(handle, InlineHandle) and handle.result() == 3
    assert queue_runtime.current().settings.database_url is None


def test_keys_are_per_test_first():
    assert app.add.enqueue(1, 1, idempotency_key="k").result() == 2


def test_keys_are_per_test_second():
    assert app.add.enqueue(2, 2, idempotency_key="k").result() == 4  # a fresh key space
    assert app.RUNS == [(2, 2)]


def test_a_repeated_key_runs_once():
    app.send_receipt.enqueue(7, "a@x", idempotency_key="receipt:7")
    app.send_receipt.enqueue(7, "a@x", idempotency_key="receipt:7")
    assert app.RUNS == [("receipt", 7)]


@pytest.mark.queue_runtime(mode="manual")
def test_manual_holds_until_drained():
    app.add.enqueue(1, 2)
    app.send_receipt.enqueue(9, "b@x", idempotency_key="receipt:9")
    app.fan_out.enqueue(2)
    assert app.RUNS == []
    assert [j.name for j in enqueued_jobs()] == [app.add.name, app.send_receipt.name, app.fan_out.name]
    assert enqueued_jobs(app.add)[0].args == {"a": 1, "b": 2}
    found = assert_enqueued(app.send_receipt, order_id=9)
    assert found.idempotency_key == "receipt:9" and found.args["email"] == "b@x"
    with pytest.raises(AssertionError, match="was not enqueued with"):
        assert_enqueued(app.add, a=5)
    drained = drain()
    assert (drained.succeeded, drained.failed) == (5, [])
    assert sorted(map(str, app.RUNS)) == sorted(map(str, [(1, 2), ("receipt", 9), (0, 0), (1, 1)]))
    assert enqueued_jobs() == []


def test_an_explicit_configure_wins():
    runtime = queue_runtime.configure(mode="inline", database_url=None)
    assert queue_runtime.current() is runtime


@pytest.mark.queue_runtime(real=True)
def test_real_uses_the_configured_queue():
    assert queue_runtime.current().settings.database_url == "{url}"
"""

PYPROJECT = """
[tool.queue_runtime]
database_url = "{url}"
schema = "never_created"
"""

OFF_TEST = """
import queue_runtime


def test_the_plugin_is_off():
    assert queue_runtime.current().settings.database_url == "{url}"
"""


def _app(tmp_path: Path, tests: str, ini: str = "") -> tuple[Path, str]:
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/nothing"
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format(url=url) + ini)
    (tmp_path / "test_app.py").write_text(tests.replace("{url}", url))
    return tmp_path, url


def _pytest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("QUEUE_RUNTIME_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", *args],
        cwd=root,
        env={**clean, "PYTHONPATH": str(root), **env},
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_an_apps_suite_never_touches_its_configured_database(tmp_path: Path) -> None:
    root, _ = _app(tmp_path, TESTS)
    proc = _pytest(root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "7 passed" in proc.stdout


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("-o", "queue_runtime_testing=off"), {}),
        ((), {"QUEUE_RUNTIME_TESTING": "off"}),
        ((), {"QUEUE_RUNTIME_MODE": "queue"}),
    ],
    ids=["ini", "env", "real-queue-run"],
)
def test_the_plugin_can_be_turned_off(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    root, _ = _app(tmp_path, OFF_TEST)
    proc = _pytest(root, *args, **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_unknown_mode_is_a_usage_error(tmp_path: Path) -> None:
    root, _ = _app(tmp_path, OFF_TEST)
    proc = _pytest(root, QUEUE_RUNTIME_TESTING="sometimes")
    assert proc.returncode != 0 and "expected one of inline, manual, real, off" in (
        proc.stdout + proc.stderr
    )


UNENCODABLE_TEST = """
import threading

import pytest

from queue_runtime import job
from queue_runtime.errors import PayloadError, Unencodable


@job(name="app.hold", pool="batch")
def hold(lock):
    return lock is not None


def test_an_unencodable_argument_raises_instead_of_falling_back():
    with pytest.raises(Unencodable, match="app.hold: parameter 'lock'") as caught:
        hold.enqueue(threading.Lock())
    assert isinstance(caught.value, PayloadError)
"""


def test_under_the_plugin_an_unencodable_argument_raises(tmp_path: Path) -> None:
    root, _ = _app(tmp_path, UNENCODABLE_TEST)
    proc = _pytest(root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
