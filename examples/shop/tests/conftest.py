"""Fixtures of the shop's own tests: a fresh app per test, in a temp dir.

Mail goes to an in-memory outbox and the payment gateway is an httpx
MockTransport: no test touches the network. Every test checks that the
threads it caused have finished by the end (background work included).

Queue mode (``QUEUE_RUNTIME_MODE=queue``, for the shop once ``migrator apply``
has moved jobs onto queue_runtime, configured by ``[tool.queue_runtime]`` in
``pyproject.toml``): every test using the app gets its own ``queue-runtime
worker`` subprocess whose ``SHOP_HOME`` is that test's temp dir, so the jobs the
app enqueues run in another process against the same files. A worker per test,
not one per run: each test has its own database and directories (ids, days and
files would collide in a shared one). At the end of the test the queue must be
drained with no job dead-lettered; then the worker is stopped by its PID.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

# Make ``import shop`` work without installing it (the root test run collects us too).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient
from shop.app import create_app
from shop.jobs import cached_product
from shop.settings import Settings

THREAD_DEADLINE = 10.0
QUEUE_MODE = os.environ.get("QUEUE_RUNTIME_MODE") == "queue"
SHOP_ROOT = Path(__file__).resolve().parents[1]
WORKER_START_DEADLINE = 60.0
DRAIN_DEADLINE = 30.0


def _wait_until(
    predicate: Callable[[], object], timeout: float = 10.0, message: str = "condition"
) -> object:
    """Poll ``predicate`` until it is truthy; fail at the deadline (no sleep-and-hope)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(0.01)
    return value


@dataclass
class FakeGateway:
    """The payment gateway: answers a repeated Idempotency-Key with the first capture."""

    requests: list[httpx.Request] = field(default_factory=list)
    captures: dict[str, str] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/v1/captures":
            key = request.headers["Idempotency-Key"]
            capture_id = self.captures.setdefault(key, f"cap_{next(self._ids)}")
            return httpx.Response(200, json={"id": capture_id})
        if request.url.path == "/v1/refunds":
            return httpx.Response(200, json={"id": f"re_{next(self._ids)}"})
        return httpx.Response(404, json={"error": "no such endpoint"})

    def calls_to(self, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path == path]


@pytest.fixture(scope="session", autouse=True)
def queue_runtime_connected() -> Iterator[None]:
    """Queue mode: connect once, before any test counts its threads (the pool's are long-lived)."""
    if not QUEUE_MODE:
        yield
        return
    import queue_runtime

    runtime = queue_runtime.current()
    if not runtime.settings.database_url:
        pytest.exit("QUEUE_RUNTIME_MODE=queue needs [tool.queue_runtime] database_url", 2)
    runtime.store.stats()  # opens the connection pool (and its threads) now
    yield
    runtime.close()


@pytest.fixture(autouse=True)
def no_thread_leaks() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_DEADLINE
    started = [t for t in threading.enumerate() if t not in before]
    for thread in started:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    assert [t.name for t in started if t.is_alive()] == []


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.in_directory(
        tmp_path, gateway_url="https://gateway.test", gateway_key="sk_test"
    )


@pytest.fixture
def outbox() -> list[EmailMessage]:
    return []


@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def client(
    settings: Settings, outbox: list[EmailMessage], gateway: FakeGateway, tmp_path: Path
) -> Iterator[TestClient]:
    app = create_app(settings, outbox=outbox, gateway_transport=httpx.MockTransport(gateway))
    with TestClient(app) as test_client:
        if not QUEUE_MODE:
            yield test_client
            return
        with queue_worker(tmp_path):  # started once the app has created the database
            yield test_client


def _queue_counts() -> tuple[int, int]:
    """(jobs not finished yet, dead jobs) over every pool of the configured queue."""
    import queue_runtime

    stats = queue_runtime.current().store.stats()
    return sum(s.depth + s.scheduled + s.running for s in stats), sum(s.dead for s in stats)


@contextmanager
def queue_worker(home: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A ``queue-runtime worker`` serving the shop in ``home``; the queue drained, then stopped."""
    log = home / "worker.log"
    env = {
        **os.environ,
        "SHOP_HOME": str(home),
        "SHOP_TEST_PARENT_PID": str(os.getpid()),
        "PYTHONPATH": os.pathsep.join(
            [str(SHOP_ROOT / "tests"), str(SHOP_ROOT), os.environ.get("PYTHONPATH", "")]
        ),
    }
    _, dead_before = _queue_counts()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "queue_runtime.cli", "worker", "queue_worker_app"],
            cwd=SHOP_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until(
            lambda: proc.poll() is not None or b" serving pools " in log.read_bytes(),
            timeout=WORKER_START_DEADLINE,
            message=f"the worker to start ({log})",
        )
        assert proc.poll() is None, f"the worker exited:\n{log.read_text()[-3000:]}"
        yield proc
        _wait_until(
            lambda: _queue_counts()[0] == 0 or proc.poll() is not None,
            timeout=DRAIN_DEADLINE,
            message=f"the worker to drain the queue ({log})",
        )
        pending, dead = _queue_counts()
        assert (pending, dead - dead_before) == (0, 0), log.read_text()[-3000:]
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (a graceful shutdown), then SIGKILL at the deadline; only this PID."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def user(client: TestClient, outbox: list[EmailMessage]) -> dict[str, object]:
    """A signed-up user whose welcome mail has already gone out."""
    body = client.post("/users", json={"email": "ana@example.com", "name": "Ana"}).json()
    _wait_until(lambda: len(outbox) == 1, message="the welcome mail")
    return dict(body)


@pytest.fixture
def product(client: TestClient) -> dict[str, object]:
    """A product with 10 in stock whose cache has already been warmed."""
    body = client.post("/products", json={"name": "Mug", "price_cents": 1200, "stock": 10}).json()
    _wait_until(lambda: cached_product(body["id"]), message="the cache warmer")
    return dict(body)


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> Callable[..., object]:
    """``wait_until(predicate, timeout=10.0, message=...)``."""
    return _wait_until
