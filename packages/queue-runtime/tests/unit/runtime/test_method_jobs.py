"""A job defined as a method: ``obj.method.enqueue(x)`` queues ``Class.method(obj, x)``.

The instance is the call's first argument and crosses like any other: a
dataclass as tagged JSON (here), a model instance by reference. Calling the
bound job calls the method; read from the class it is the job itself, whose
first argument is the instance. An instance no codec covers makes the call run
as the site ran it, a direct call on that same object, and is counted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from queue_runtime import InlineShape, Mode, Runtime, Settings, configure, job
from queue_runtime import runtime as runtime_module
from queue_runtime.errors import ConfigError, PayloadError
from queue_runtime.fallbacks import fallback_counts
from queue_runtime.registry import Registry
from queue_runtime.store import JobQuery, JobStatus
from queue_runtime.testing import memory_stores
from tests.unit.runtime.test_configure_memory import drain

jobs = Registry()
ran: list[tuple[object, str]] = []


@dataclass
class Report:
    report_id: int
    title: str

    @job(name="tests.methods.Report.render", pool="batch", registry=jobs)
    def render(self, fmt: str, *, pages: int = 1) -> str:
        ran.append((self, fmt))
        return f"{self.title}#{self.report_id}.{fmt}x{pages}"


@dataclass
class Live:
    """Holds a lock: no codec stores it."""

    name: str
    lock: threading.Lock = field(default_factory=threading.Lock)

    @job(name="tests.methods.Live.touch", pool="batch", registry=jobs)
    def touch(self, n: int) -> int:
        ran.append((self, str(n)))
        return n + 1


class Catalog:
    """A classmethod job: ``@job`` above ``@classmethod``."""

    source = "main"

    @job(name="tests.methods.Catalog.refresh", pool="batch", registry=jobs)
    @classmethod
    def refresh(cls, url: str) -> str:
        ran.append((cls, url))
        return f"{cls.source}:{url}"


class MirrorCatalog(Catalog):
    source = "mirror"


@pytest.fixture(params=[Mode.QUEUE, Mode.INLINE], ids=["queue-mode", "inline-mode"])
def runtime(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setattr(runtime_module, "_current", None)
    ran.clear()
    settings = Settings(mode=request.param)
    rt = configure(settings, stores=memory_stores(settings))
    yield rt
    rt.close()


def test_calling_a_method_job_on_an_instance_calls_the_method() -> None:
    ran.clear()
    report = Report(7, "Q3")
    assert report.render("pdf", pages=2) == "Q3#7.pdfx2"
    assert ran == [(report, "pdf")]
    assert Report.render.name == "tests.methods.Report.render"
    assert report.render.name == Report.render.name  # the bound job reads as the job


def test_the_instance_crosses_as_the_first_argument(runtime: Runtime) -> None:
    report = Report(7, "Q3")
    handle = report.render.enqueue("pdf", pages=2)
    if runtime.mode is Mode.QUEUE:
        assert handle.status() is JobStatus.QUEUED and ran == []
        assert drain(runtime, jobs, "batch") == 1
    assert handle.result(timeout=1) == "Q3#7.pdfx2"
    [(seen, fmt)] = ran
    assert (seen, fmt) == (report, "pdf")  # a copy read back, equal to the caller's
    assert seen is not report  # it went through the payload, as a worker would see it


def test_options_and_many_pass_the_instance_first(runtime: Runtime) -> None:
    report = Report(1, "A")
    one = report.render.options(idempotency_key="r-1").enqueue("csv")
    again = report.render.options(idempotency_key="r-1").enqueue("csv")
    many = report.render.enqueue_many([(("a",), {}), (("b",), {"pages": 3})])
    if runtime.mode is Mode.QUEUE:
        assert again.id == one.id
        assert drain(runtime, jobs, "batch") == 3
    assert [h.result(timeout=1) for h in (one, *many)] == ["A#1.csvx1", "A#1.ax1", "A#1.bx3"]


def test_read_from_the_class_the_instance_is_the_first_argument(runtime: Runtime) -> None:
    handle = Report.render.enqueue(Report(2, "B"), "txt")
    if runtime.mode is Mode.QUEUE:
        drain(runtime, jobs, "batch")
    assert handle.result(timeout=1) == "B#2.txtx1"


def test_an_instance_no_codec_covers_runs_as_a_direct_call_on_the_same_object(
    runtime: Runtime,
) -> None:
    live = Live("pump")
    before = sum(n for f, n in fallback_counts().items() if f.job == Live.touch.name)
    handle = live.touch.options(inline=InlineShape.CALL).enqueue(4)
    assert handle.status() is JobStatus.SUCCEEDED and handle.result() == 5
    assert ran == [(live, "4")] and ran[0][0] is live  # the caller's own object
    after = sum(n for f, n in fallback_counts().items() if f.job == Live.touch.name)
    assert after == before + 1
    assert runtime.inspector.list_jobs(JobQuery()).jobs == ()  # nothing was stored


def test_calling_a_classmethod_job_calls_it_on_the_class_read_from() -> None:
    ran.clear()
    assert Catalog.refresh("a") == "main:a"
    assert MirrorCatalog.refresh("b") == "mirror:b"
    assert MirrorCatalog().refresh("c") == "mirror:c"  # from an instance: its class
    assert ran == [(Catalog, "a"), (MirrorCatalog, "b"), (MirrorCatalog, "c")]
    assert Catalog.refresh.name == MirrorCatalog.refresh.name == "tests.methods.Catalog.refresh"


def test_a_classmethod_job_queues_the_class_it_was_read_from(runtime: Runtime) -> None:
    handle = MirrorCatalog.refresh.enqueue("x")
    keyed = Catalog.refresh.options(idempotency_key="c-1").enqueue("y")
    if runtime.mode is Mode.QUEUE:
        assert handle.record().args["cls"] == {
            "__qr__": "class",
            "cls": f"{__name__}:MirrorCatalog",
        }
        assert drain(runtime, jobs, "batch") == 2
    assert (handle.result(timeout=1), keyed.result(timeout=1)) == ("mirror:x", "main:y")
    assert ran == [(MirrorCatalog, "x"), (Catalog, "y")]


def test_a_stored_class_that_is_not_the_jobs_class_is_refused() -> None:
    codec = Catalog.__dict__["refresh"].definition.codec
    assert codec.decode(dict(codec.encode((MirrorCatalog, "u"), {}, 10_000))) == (
        [MirrorCatalog, "u"],
        {},
    )
    for forged in (f"{__name__}:Report", "decimal:Decimal", f"{__name__}:Nothing"):
        with pytest.raises(PayloadError, match="refused"):
            codec.decode({"cls": {"__qr__": "class", "cls": forged}, "url": "u"})


def test_a_classmethod_job_cannot_be_periodic() -> None:
    with pytest.raises(ConfigError, match="classmethod job cannot be periodic"):

        class Ticker:
            @job(every="5m", registry=Registry())
            @classmethod
            def tick(cls) -> None: ...
