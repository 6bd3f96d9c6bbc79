"""queue_runtime's pytest plugin (entry point ``pytest11``): an app's tests never touch its queue.

Installed with queue-runtime, active in every pytest run of a migrated app.
Each test gets a Runtime of its own on the in-memory stores
(:func:`queue_runtime.testing.memory_stores`), so the ``database_url`` of the
app's ``pyproject.toml`` is never opened, and the idempotency keys of one
test are not seen by the next. The modes (Sidekiq's testing modes, Oban's
``testing: :inline`` / ``:manual``):

- ``inline`` (the default): enqueue runs the job at once, in the test's
  process, through the execution guard when it has a key (a key reused with
  other arguments is refused, as in production);
- ``manual``: enqueues wait in memory until the test calls
  :func:`~queue_runtime.testing.drain`; :func:`~queue_runtime.testing.enqueued_jobs`
  and :func:`~queue_runtime.testing.assert_enqueued` look at them. Gated jobs
  registered when the test starts are certified in that memory, so they wait too;
- ``real``: the plugin stands aside for the test and the Runtime comes from the
  configuration (the app's database);
- ``off``: the plugin does nothing.

In every mode but ``off``, an enqueue whose argument no codec covers raises
:class:`~queue_runtime.errors.Unencodable` (a ``PayloadError``) instead of
running as the site did (:mod:`queue_runtime.fallbacks`): the suite shows what
would not be stored.

Per test, the first found wins: ``@pytest.mark.queue_runtime(real=True)`` or
``@pytest.mark.queue_runtime(mode="manual")``; the environment variable
``QUEUE_RUNTIME_TESTING``; the ini option ``queue_runtime_testing``
(``[tool.pytest.ini_options]``); ``inline``. Two explicit choices also win
over the plugin: a ``configure(...)`` made by a test or its (function-scoped)
fixtures replaces the plugin's Runtime for that test (the last ``configure``
wins; it is closed after the test, so the next test starts clean), and a run
started with ``QUEUE_RUNTIME_MODE=queue`` or ``QUEUE_RUNTIME_DATABASE_URL`` in
its environment is a run against a real queue on purpose: the plugin is off.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from enum import StrEnum

import pytest

from queue_runtime._settings_load import load_settings
from queue_runtime.config import GateAction, Mode, RolloutMode, Settings
from queue_runtime.fallbacks import raise_instead
from queue_runtime.gate._decide import current_fingerprint
from queue_runtime.runtime import Runtime, configure, configured
from queue_runtime.testing._runtime import memory_stores

INI = "queue_runtime_testing"
ENV = "QUEUE_RUNTIME_TESTING"
MARKER = "queue_runtime"
REAL_QUEUE_ENV = ("QUEUE_RUNTIME_MODE", "QUEUE_RUNTIME_DATABASE_URL")


class PluginMode(StrEnum):
    INLINE = "inline"
    MANUAL = "manual"
    REAL = "real"
    OFF = "off"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI, f"queue_runtime in tests: {', '.join(PluginMode)}", default="inline")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(real=False, mode=None): queue_runtime in this test "
        "(real=True: the configured queue; mode='inline'|'manual'|'real'|'off')",
    )


def testing_mode(request: pytest.FixtureRequest) -> PluginMode:
    """This test's mode: marker, then environment, then ini option, then inline."""
    if _real_queue_requested():
        return PluginMode.OFF
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None and marker.kwargs.get("real"):
        return PluginMode.REAL
    if marker is not None and marker.kwargs.get("mode"):
        return _mode(str(marker.kwargs["mode"]), f"@pytest.mark.{MARKER}(mode=...)")
    if os.environ.get(ENV):
        return _mode(os.environ[ENV], ENV)
    return _mode(str(request.config.getini(INI)), INI)


def _real_queue_requested() -> bool:
    mode = os.environ.get("QUEUE_RUNTIME_MODE", "")
    return mode == Mode.QUEUE.value or bool(os.environ.get("QUEUE_RUNTIME_DATABASE_URL"))


def _mode(text: str, where: str) -> PluginMode:
    try:
        return PluginMode(text.strip().lower())
    except ValueError:
        raise pytest.UsageError(
            f"{where} = {text!r}: expected one of {', '.join(PluginMode)}"
        ) from None


def testing_settings(mode: PluginMode) -> Settings:
    """The app's settings (pools, jobs, inventory) with no database or Redis to open."""
    held = mode is PluginMode.MANUAL
    return load_settings(
        mode=Mode.QUEUE,
        database_url=None,
        redis_url=None,
        default_rollout=RolloutMode.ASYNC if held else RolloutMode.INLINE,
        gate_action=GateAction.INLINE,
    )


@pytest.fixture(autouse=True)
def queue_runtime_testing(request: pytest.FixtureRequest) -> Iterator[Runtime | None]:
    """The test's Runtime on in-memory stores (None in the real and off modes)."""
    mode = testing_mode(request)
    if mode is PluginMode.OFF:
        yield None
        return
    _close_current()  # a Runtime an earlier test configured is not this test's
    raise_instead(True)
    try:
        yield from _runtime_for(mode)
    finally:
        raise_instead(False)


def _runtime_for(mode: PluginMode) -> Iterator[Runtime | None]:
    if mode is PluginMode.REAL:
        yield None  # current() configures one from the app's configuration
        _close_current()
        return
    settings = testing_settings(mode)
    runtime = configure(settings, stores=memory_stores(settings))
    if mode is PluginMode.MANUAL:
        _certify_registered(runtime)
    try:
        yield runtime
    finally:
        runtime.close()
        _close_current()  # the one a configure() in the test made instead, if any


def _close_current() -> None:
    found = configured()
    if found is not None:
        found.close()


def _certify_registered(runtime: Runtime) -> None:
    """In this test's memory only: the manual mode holds every enqueue, gated jobs' too."""
    for name in runtime.registry.names():
        fingerprint = current_fingerprint(runtime.registry.get(name))
        runtime.gate_store.insert_certification(name, fingerprint, {"testing": "manual"}, "pytest")
