"""The public surface of queue_runtime is exactly what the docs promise."""

from __future__ import annotations

import subprocess
import sys

import queue_runtime


def test_all_is_exactly_the_public_api() -> None:
    assert sorted(queue_runtime.__all__) == [
        "Cancellation",
        "CertificationRefused",
        "ClassificationConflict",
        "GateClosed",
        "InlineShape",
        "JobCancelled",
        "JobFailed",
        "JobFunction",
        "JobHandle",
        "JobStatus",
        "JobTimeout",
        "KeyReused",
        "Mode",
        "PayloadError",
        "PayloadTooLarge",
        "Permanent",
        "PoolConfig",
        "PoolMismatchError",
        "QueueError",
        "RetryPolicy",
        "Runtime",
        "Settings",
        "StoreError",
        "StoreUnavailable",
        "configure",
        "current",
        "downgrade",
        "get_job",
        "job",
        "migrate",
    ]
    assert all(hasattr(queue_runtime, name) for name in queue_runtime.__all__)


def test_the_errors_a_user_catches_are_the_runtime_s_own() -> None:
    from queue_runtime import errors
    from queue_runtime.gate import _model as model

    assert queue_runtime.KeyReused is errors.KeyReused
    assert queue_runtime.CertificationRefused is model.CertificationRefused
    assert queue_runtime.GateClosed is model.GateClosed
    assert issubclass(queue_runtime.KeyReused, queue_runtime.Permanent)
    assert all(
        issubclass(getattr(queue_runtime, name), queue_runtime.QueueError)
        for name in queue_runtime.__all__
        if name.endswith(
            ("Error", "Cancelled", "Reused", "Refused", "Closed", "Conflict", "Failed", "Timeout")
        )
    )


def test_importing_connects_nothing_and_loads_no_tooling() -> None:
    code = (
        "import sys, queue_runtime\n"
        "heavy = {'alembic', 'sqlalchemy', 'libcst', 'rich', 'click', 'inventory', 'migrator'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_errors_have_one_root_and_docstring_messages() -> None:
    from queue_runtime import errors

    assert issubclass(errors.PayloadTooLarge, errors.PayloadError)
    assert issubclass(errors.Permanent, queue_runtime.QueueError)
    assert str(errors.UnknownJob("app.x")) == "No job is registered under this name: app.x"
    assert str(errors.NotConfigured()).startswith("The queue needs a database URL")
