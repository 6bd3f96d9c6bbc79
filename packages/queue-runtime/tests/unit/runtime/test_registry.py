"""@job registration, names, options, and where a job runs under Settings."""

from __future__ import annotations

import pytest

from queue_runtime import RetryPolicy, Settings, job
from queue_runtime.config import JobConfig
from queue_runtime.definition import Defined
from queue_runtime.errors import ConfigError, DuplicateJob, PoolMismatchError, UnknownJob
from queue_runtime.registry import Registry


@pytest.fixture
def registry() -> Registry:
    return Registry()


def test_name_is_the_qualified_name_and_calling_still_runs_inline(registry: Registry) -> None:
    @job(pool="batch", registry=registry)
    def resize(image_id: int) -> int:
        return image_id + 1

    assert (
        resize.name
        == f"{__name__}.test_name_is_the_qualified_name_and_calling_still_runs_inline.<locals>.resize"
    )
    assert (resize.pool, resize.is_async, resize(1)) == ("batch", False, 2)
    assert registry.get(resize.name) is resize and resize.__doc__ is None
    assert resize.__name__ == "resize"


def test_explicit_name_async_and_bare_decorator(registry: Registry) -> None:
    @job(name="mail.send", registry=registry)
    async def send(to: str) -> None: ...

    assert send.name == "mail.send" and send.is_async and "mail.send" in registry
    assert registry.names() == ["mail.send"]


def test_bare_decorator_uses_the_default_registry() -> None:
    from queue_runtime.registry import default_registry

    @job
    def plain() -> None: ...

    assert default_registry.get(plain.name) is plain and plain.pool is None


def test_one_name_two_functions_is_refused(registry: Registry) -> None:
    def first() -> None: ...

    def second() -> None: ...

    job(name="dup", registry=registry)(first)
    job(name="dup", registry=registry)(first)  # the same function again (a reload): fine
    with pytest.raises(DuplicateJob, match="'dup'"):
        job(name="dup", registry=registry)(second)


def test_unknown_job_names_the_likely_cause(registry: Registry) -> None:
    with pytest.raises(UnknownJob, match="is its module imported by the worker"):
        registry.get("app.missing")


def test_unknown_decorator_option_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['retries'\]"):
        job(retries=3)  # type: ignore[call-overload]


def test_one_decorator_object_can_register_several_functions(registry: Registry) -> None:
    batch = job(pool="batch", registry=registry)
    a = batch(lambda: 1)
    b = batch(lambda: 2)
    assert a.pool == b.pool == "batch"


def test_a_parameter_named_like_an_option_goes_to_the_job(registry: Registry) -> None:
    @job(registry=registry)
    def per_tenant(tenant: str) -> str:
        return tenant

    assert "tenant" not in per_tenant._option_names
    assert "idempotency_key" in per_tenant._option_names


def test_spec_config_beats_code_except_for_conflicting_pools(registry: Registry) -> None:
    policy = RetryPolicy(max_attempts=2)

    @job(pool="batch", retry=policy, timeout=5, priority=1, registry=registry)
    def work() -> None: ...

    plain = work.spec(Settings())
    assert (plain.pool, plain.retry, plain.timeout, plain.priority) == ("batch", policy, 5, 1)
    tuned = Settings(jobs={work.name: JobConfig(timeout=9, priority=7, retry=RetryPolicy())})
    spec = work.spec(tuned)
    assert (spec.timeout, spec.priority, spec.retry.max_attempts) == (9, 7, 5)
    with pytest.raises(PoolMismatchError, match="declared with @job"):
        work.spec(Settings(jobs={work.name: JobConfig(pool="transactional")}))


def test_spec_pool_defaults_and_must_exist(registry: Registry) -> None:
    @job(registry=registry)
    def anywhere() -> None: ...

    @job(pool="gpu", registry=registry)
    def on_gpu() -> None: ...

    assert anywhere.spec(Settings(default_pool="transactional")).pool == "transactional"
    with pytest.raises(PoolMismatchError, match="'gpu', which is not configured"):
        on_gpu.spec(Settings())


def test_a_loader_registers_a_name_on_its_first_lookup_only(registry: Registry) -> None:
    @job(pool="batch", name="late.one", registry=Registry())
    def late() -> None:
        return None

    asked: list[str] = []

    def loader(name: str) -> Defined | None:
        asked.append(name)
        return late if name == "late.one" else None

    registry.add_loader(loader)
    registry.add_loader(loader)  # once per loader
    assert "late.one" in registry and registry.get("late.one") is late
    assert "late.other" not in registry
    with pytest.raises(UnknownJob, match=r"late\.other"):
        registry.get("late.other")
    assert asked == ["late.one", "late.other", "late.other"]  # a known name is not asked again
    assert registry.names() == ["late.one"]
