"""Fixtures of the shop's own tests: a fresh app per test, in a temp dir.

Mail goes to an in-memory outbox and the payment gateway is an httpx
MockTransport: no test touches the network. Every test checks that the
threads it caused have finished by the end (background work included).
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
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
    settings: Settings, outbox: list[EmailMessage], gateway: FakeGateway
) -> Iterator[TestClient]:
    app = create_app(settings, outbox=outbox, gateway_transport=httpx.MockTransport(gateway))
    with TestClient(app) as test_client:
        yield test_client


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
