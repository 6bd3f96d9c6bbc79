"""Unique-key guards over time values and plain locals; library callables run as jobs."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from codemods._select import select
from codemods._types import ApplyOptions
from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import CallSite, Idempotency, Inventory, Job

_STARTER = """
import threading
from shop.jobs import run

def view(request):
    threading.Thread(target=run, args=(request.user.id,)).start()
"""


def _scan(files: dict[str, str]) -> tuple[list[CallSite], dict[str, Job]]:
    summaries = []
    for path, source in {"shop/__init__.py": "", **files}.items():
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(
            extract_source(dedent(source).lstrip(), path, module, path.endswith("__init__.py"))
        )
    config = MigratorConfig.from_toml("")
    sites, jobs = classify(summaries, config, Catalogue.load(config.catalogue))
    return sites, {job.qualname: job for job in jobs}


def _job(models: str, body: str = "Stat.objects.open_day(owner_id)") -> Job:
    jobs = f"from shop.models import Stat\n\ndef run(owner_id):\n    {body}\n"
    _, found = _scan({"shop/models.py": models, "shop/jobs.py": jobs, "shop/views.py": _STARTER})
    return found["shop.jobs.run"]


def _messages(job: Job) -> str:
    return "\n".join(e.message for e in job.evidence)


_STAT = """
from django.db import models
from django.utils import timezone


class StatManager(models.Manager):
    def open_day(self, owner):
        {body}


class Stat(models.Model):
    owner = models.IntegerField()
    day = models.DateField()
    note = models.CharField(max_length=40)
    objects = StatManager()

    class Meta:
        unique_together = (("owner", "day"),)
"""


def _stat(*lines: str) -> str:
    return _STAT.replace("{body}", "\n        ".join(lines))


def test_a_time_value_only_in_the_deduplicated_insert_is_covered() -> None:
    job = _job(
        _stat(
            "today = timezone.now().date()",
            "self.bulk_create([Stat(owner=owner, day=today)], ignore_conflicts=True)",
        )
    )
    assert job.idempotency is Idempotency.NEEDS_KEY, _messages(job)
    assert "day holds a time value" in _messages(job)


def test_a_time_value_written_inline_in_the_instance_is_covered() -> None:
    job = _job(
        _stat(
            "self.bulk_create(",
            "    [Stat(owner=owner, day=timezone.now().date())], ignore_conflicts=True",
            ")",
        )
    )
    assert job.idempotency is Idempotency.NEEDS_KEY, _messages(job)


def test_a_time_value_that_also_reaches_another_call_is_not_covered() -> None:
    job = _job(
        _stat(
            "today = timezone.now().date()",
            "self.filter(owner=owner).update(note=str(today))",
            "self.bulk_create([Stat(owner=owner, day=today)], ignore_conflicts=True)",
        )
    )
    assert job.idempotency is Idempotency.NON_IDEMPOTENT, _messages(job)


def test_a_time_line_that_does_more_than_make_the_value_is_not_covered() -> None:
    job = _job(
        _stat(
            "today = self.log(timezone.now())",
            "self.bulk_create([Stat(owner=owner, day=today)], ignore_conflicts=True)",
        )
    )
    assert job.idempotency is Idempotency.NON_IDEMPOTENT, _messages(job)


def test_a_random_value_in_the_body_refuses_plain_locals() -> None:
    job = _job(
        "import uuid\n"
        + _stat(
            "code = uuid.uuid4().hex",
            "self.create(owner=owner, day=code)",
        )
    )
    assert job.idempotency is Idempotency.NON_IDEMPOTENT, _messages(job)


def test_a_value_from_a_minting_helper_refuses_plain_locals() -> None:
    job = _job(
        _stat(
            "day = make_token()",
            "self.create(owner=owner, day=day)",
        )
        + "\n\ndef make_token():\n    return 'x'\n"
    )
    assert job.idempotency is Idempotency.NON_IDEMPOTENT, _messages(job)


def test_a_create_on_a_non_unique_field_from_a_local_is_no_guard() -> None:
    job = _job(_stat("for note in ('a', 'b'):", "    self.create(owner=owner, note=note)"))
    assert job.idempotency is Idempotency.NON_IDEMPOTENT, _messages(job)


def test_a_create_on_the_whole_unique_key_from_locals_is_guarded() -> None:
    job = _job(_stat("for day in ('2024-01-01',):", "    self.create(owner=owner, day=day)"))
    assert job.idempotency is Idempotency.NEEDS_KEY, _messages(job)
    assert "the unique owner, day of Stat refuses a second row" in _messages(job)


_STORAGE = """
from functools import partial

from django.core.files.storage import default_storage
from django.db import transaction


def forget(name):
    transaction.on_commit(partial(default_storage.delete, name))


def keep(name, content):
    transaction.on_commit(partial(default_storage.save, name, content))


def listed(names):
    transaction.on_commit(lambda: list(names.pop()))


def delete(name):
    return name
"""


def _storage_scan() -> tuple[list[CallSite], dict[str, Job]]:
    return _scan({"shop/files.py": _STORAGE})


def test_a_library_callable_is_a_job_named_by_it() -> None:
    sites, jobs = _storage_scan()
    by_line = {s.location.line: s for s in sites}
    deleted = jobs["django.core.files.storage.default_storage.delete"]
    saved = jobs["django.core.files.storage.default_storage.save"]
    assert deleted.idempotency is Idempotency.IDEMPOTENT
    assert saved.idempotency is Idempotency.NON_IDEMPOTENT
    assert deleted.location is None and saved.location is None
    assert "no project function to move: wrap it in one" in _messages(deleted)
    assert by_line[8].job == "django.core.files.storage.default_storage.delete"
    assert by_line[8].idempotency is Idempotency.IDEMPOTENT
    # a lambda wraps more than the library call: not a library job
    assert by_line[16].job == "unknown"
    # the project's own ``delete`` is not the library job
    assert "shop.files.delete" not in jobs


def test_apply_refuses_a_library_callable_with_the_reason(tmp_path: Path) -> None:
    sites, jobs = _storage_scan()
    inventory = Inventory(root=str(tmp_path), sites=sites, jobs=list(jobs.values()))
    targets, outcomes = select(inventory, ApplyOptions(), {j: None for j in jobs})
    assert targets == []
    reasons = {o.site.job: o.reason for o in outcomes}
    assert reasons["django.core.files.storage.default_storage.delete"] == (
        "django.core.files.storage.default_storage.delete: no project function to move: "
        "wrap it in one"
    )


_FILE_CHUNKS = """
import asyncio


async def upload(path, chunks):
    with open(path, "ab") as f:
        for chunk in chunks:
            await asyncio.to_thread(f.write, chunk)
"""


def test_a_library_method_of_a_value_the_caller_holds_is_no_library_job() -> None:
    """``to_thread(f.write, chunk)``: io's write is catalogued as explained (open()'s mode
    carries the effect), but as a job alone it would look like a no-op while a repeat
    writes the chunk again at the file's new position: unknown, with the reason."""
    sites, jobs = _scan({"shop/files.py": _FILE_CHUNKS})
    [site] = [s for s in sites if s.location.path == "shop/files.py"]
    assert site.job == "unknown"
    assert site.idempotency is Idempotency.UNKNOWN
    assert "a library method of a value the caller holds" in site.unresolved_reason
    assert not any(name.startswith("io.") for name in jobs)
