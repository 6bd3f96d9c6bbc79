"""A worker embedded in a program (``Worker(...).run()``, not the CLI) fails at once, in one
line, when it could not work: Redis or PostgreSQL not answering, an unknown pool."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from queue_runtime import Settings, configure
from queue_runtime.errors import ConfigError, LeasesUnavailable, StoreUnavailable
from queue_runtime.runtime import Runtime
from queue_runtime.worker import Worker
from tests.integration import fault_app
from tests.support import free_port

pytestmark = [pytest.mark.pg, pytest.mark.redis]
FAST = 5.0  # seconds: a failing start must not wait for any pool or retry loop


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    fault_app.create_tables(settings.database_url or "", settings.schema_name)
    runtime = configure(settings)
    yield runtime
    runtime.close()


def _fails_fast(worker: Worker, error: type[Exception], *words: str) -> str:
    started = time.monotonic()
    with pytest.raises(error) as raised:
        worker.run()
    assert time.monotonic() - started < FAST
    message = str(raised.value)
    assert "\n" not in message
    assert all(word in message for word in words), message
    assert not worker.stopped  # it never served: nothing to shut down
    return message


@pytest.mark.parametrize(
    ("server", "error"),
    [("redis", LeasesUnavailable), ("postgres", StoreUnavailable)],
)
def test_run_without_a_server_raises_instead_of_idling(
    settings: Settings, server: str, error: type[Exception]
) -> None:
    port = free_port()
    where = f"127.0.0.1:{port}"
    broken = (
        {"redis_url": f"redis://{where}/0"}
        if server == "redis"
        else {"database_url": f"postgresql://postgres@{where}/x"}
    )
    runtime = configure(settings, **broken)
    try:
        _fails_fast(Worker(runtime), error, where)
    finally:
        runtime.close()


def test_an_unknown_pool_is_refused_when_the_worker_is_built(rt: Runtime) -> None:
    with pytest.raises(ConfigError, match=r"unknown pool\(s\) nope; configured pools: "):
        Worker(rt, ["nope"])


def test_start_raises_in_the_caller_not_in_its_thread(settings: Settings) -> None:
    runtime = configure(settings, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    try:
        with pytest.raises(LeasesUnavailable):
            Worker(runtime).start()
    finally:
        runtime.close()


def test_a_healthy_worker_checks_once_then_serves(rt: Runtime) -> None:
    worker = Worker(rt, ["batch"])
    worker.check()  # what the CLI calls before it binds --metrics-port
    handle = fault_app.work.enqueue(3)
    worker.start()
    try:
        assert handle.result(timeout=20) == 6
    finally:
        worker.stop()
    assert worker.stopped
