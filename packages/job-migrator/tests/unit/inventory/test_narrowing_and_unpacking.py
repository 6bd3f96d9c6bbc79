"""A receiver's type from the idioms a type checker reads: isinstance, cast, unpacking.

``if isinstance(obj, Page): obj.snapshot()`` narrows ``obj`` in the body; ``cast(Page, x)``
is what the caller declares; ``a, b = Page.objects.get(...), ...`` and Django's ``row,
created = Page.objects.get_or_create(...)`` bind each name; ``for k, v in pages.items()``
and ``for a, b in zip(pages, names)`` pair each loop variable with its iterable; and a
parameter annotated ``list[Page]`` / ``dict[str, Page]`` holds Pages. A ``Mailbox`` whose
``snapshot`` mails stands for what an untyped ``snapshot()`` might be: only the typing
decides these verdicts, and every adversary (the name after the ``if``, an ``or``, a
cast to a class the scan does not know, a starred unpacking, a zip whose variables do not
match, a swap ``a, b = b, a``, read here as nothing rather than as one binding after the
other) stays ``unknown``.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts, thread_views

MODELS = (
    "from django.db import models\n\n\n"
    "class Page(models.Model):\n"
    "    title = models.CharField(max_length=10)\n\n"
    "    def snapshot(self):\n"
    "        Page.objects.filter(pk=self.pk).update(title='x')\n"
)
MAILBOX = (
    "import smtplib\n\n\n"
    "class Mailbox:\n"
    "    def snapshot(self):\n"
    "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'x')\n"
)
JOBS = (
    "from typing import cast\n\n"
    "from app.models import Page\n\n\n"
    "def narrowed(obj):\n"
    "    if isinstance(obj, Page) and obj.title:\n"
    "        obj.snapshot()\n\n\n"
    "def declared(obj):\n"
    "    page = cast(Page, obj)\n"
    "    page.snapshot()\n\n\n"
    "def unpacked(pk):\n"
    "    first, second = Page.objects.get(pk=pk), Page.objects.get(pk=pk + 1)\n"
    "    second.snapshot()\n\n\n"
    "def created(pk):\n"
    "    page, made = Page.objects.get_or_create(pk=pk)\n"
    "    page.snapshot()\n\n\n"
    "def by_key(pages: dict[str, Page]):\n"
    "    for key, page in pages.items():\n"
    "        page.snapshot()\n\n\n"
    "def zipped(pages: list[Page], names: list[str]):\n"
    "    for page, name in zip(pages, names):\n"
    "        page.snapshot()\n\n\n"
    "def held(pages: list[Page], index: dict[str, Page]):\n"
    "    for page in pages:\n"
    "        page.snapshot()\n"
    "    found = index.get('a')\n"
    "    found.snapshot()\n\n\n"
    "def after_the_if(obj):\n"
    "    if isinstance(obj, Page):\n"
    "        pass\n"
    "    obj.snapshot()\n\n\n"
    "def either(obj):\n"
    "    if isinstance(obj, Page) or obj.title:\n"
    "        obj.snapshot()\n\n\n"
    "def cast_unknown(obj):\n"
    "    page = cast('Nowhere', obj)\n"
    "    page.snapshot()\n\n\n"
    "def starred(box):\n"
    "    first, *rest = Page.objects.get(pk=1), box\n"
    "    rest[0].snapshot()\n\n\n"
    "def swapped():\n"
    "    from app.mail import Mailbox\n\n"
    "    page, box = Page.objects.get(pk=1), Mailbox()\n"
    "    page, box = box, page\n"
    "    box.snapshot()\n\n\n"
    "def library_class(obj):\n"
    "    import somelib\n\n"
    "    if isinstance(obj, somelib.Thing):\n"
    "        obj.first()\n\n\n"
    "def mismatched(pages: list[Page], boxes):\n"
    "    for page, box in zip(boxes, pages):\n"
    "        page.snapshot()\n"
)
NAMES = [
    "narrowed",
    "declared",
    "unpacked",
    "created",
    "by_key",
    "zipped",
    "held",
    "after_the_if",
    "either",
    "cast_unknown",
    "starred",
    "mismatched",
    "library_class",
    "swapped",
]
VIEWS = thread_views(NAMES)


def test_isinstance_cast_unpacking_and_pairs_type_the_receiver(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(models=MODELS, mail=MAILBOX, jobs=JOBS, views=VIEWS)
    typed = ("narrowed", "declared", "unpacked", "created", "by_key", "zipped", "held")
    assert {name: verdicts[name] for name in typed} == dict.fromkeys(typed, Idempotency.IDEMPOTENT)


def test_isinstance_of_a_library_class_narrows_nothing(app_verdicts: Verdicts) -> None:
    """``obj.first()`` on a receiver of unknown type is read by name (a pure ``?.first``);
    narrowed to ``somelib.Thing``, whose source is not read, it would be a gap instead."""
    assert (
        app_verdicts(models=MODELS, mail=MAILBOX, jobs=JOBS, views=VIEWS)["library_class"]
        == Idempotency.IDEMPOTENT
    )


def test_what_those_idioms_do_not_say_stays_untyped(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(models=MODELS, mail=MAILBOX, jobs=JOBS, views=VIEWS)
    untyped = ("after_the_if", "either", "cast_unknown", "starred", "mismatched", "swapped")
    assert {name: verdicts[name] for name in untyped} == dict.fromkeys(untyped, Idempotency.UNKNOWN)


def test_a_generic_class_subscripted_in_an_annotation_is_an_instance_of_it() -> None:
    """``Flow[int]`` is a ``Flow``; typing's forms, builtin containers, ``type[...]`` and
    Django's ``QuerySet[...]`` are no instance of the class they are subscripted with."""
    from inventory._extract import extract_source

    source = (
        "from typing import Generic, List, Type, TypeVar\n"
        "from django.db.models import QuerySet\n\n"
        "T = TypeVar('T')\n\n\n"
        "class Flow(Generic[T]):\n"
        "    def abort(self): ...\n\n\n"
        "def one(x: Flow[int]):\n    x.abort()\n\n\n"
        "def quoted(x: 'Flow[int] | None'):\n    x.abort()\n\n\n"
        "def kind(x: Type[Flow]):\n    x.abort()\n\n\n"
        "def builtin_kind(x: type[Flow]):\n    x.abort()\n\n\n"
        "def many(x: List[Flow]):\n    x.abort()\n\n\n"
        "def rows(x: QuerySet[Flow]):\n    x.abort()\n"
    )
    summary = extract_source(source, "app/flows.py", "app.flows")
    targets = {f.name: f.calls[0].target for f in summary.functions if f.calls}
    assert targets["one"] == "app.flows.Flow.abort"
    assert targets["quoted"] == "app.flows.Flow.abort"
    for name in ("kind", "builtin_kind", "many", "rows"):
        assert targets[name] != "app.flows.Flow.abort", name


PROTOCOL = """
import asyncio
from typing import Protocol, TypeVar

import requests

T = TypeVar("T")


class QueueLike(Protocol[T]):
    def get(self) -> T: ...

    def put(self, item: T) -> None: ...


class HttpQueue:
    def get(self):
        return requests.get("https://queue.example/next").json()


async def read_next(queue: QueueLike[str]):
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, queue.get)


def drain(queue: QueueLike[str]):
    return queue.get()


def drain_http(queue: HttpQueue):
    return queue.get()


async def view(request, queue):
    asyncio.create_task(read_next(queue))
    asyncio.create_task(asyncio.to_thread(drain, queue))
    asyncio.create_task(asyncio.to_thread(drain_http, queue))
"""


def test_a_protocols_method_runs_whatever_implements_it(tmp_path) -> None:
    """A ``typing.Protocol``'s ``...`` method is no body that runs: any class with the
    method matches the Protocol without deriving from it, so a call through a receiver typed
    by it (or the method handed over as the job) is a gap, never "no effect". A concrete
    class's own method is followed as before."""
    from inventory import scan

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "jobs.py").write_text(PROTOCOL)
    jobs = {j.qualname: j for j in scan(tmp_path, use_cache=False, write=False, jobs=1).jobs}
    for name in ("app.jobs.QueueLike.get", "app.jobs.drain"):
        job = jobs[name]
        lines = "\n".join(e.message for e in job.evidence)
        assert job.idempotency is Idempotency.UNKNOWN, (name, lines)
        # the reason is the Protocol's, not "no source read" (the source was read)
        assert "unresolved calls (methods of a Protocol" in lines, lines
        assert "QueueLike.get" in lines and "no source read" not in lines, lines
    assert jobs["app.jobs.drain_http"].idempotency is Idempotency.IDEMPOTENT
