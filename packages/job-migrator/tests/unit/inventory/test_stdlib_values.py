"""Standard-library calls that only read the process or build values in memory are pure;
a csv writer's rows go where its file was opened (the open's mode is the effect)."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

JOBS = """import csv
import io
import os
import pathlib
import pickle
import platform
import re
import sys
import tempfile
import threading

import pandas
import requests
from PIL import Image
from slugify import slugify


def snapshot(state, path):
    if not os.access(path, os.R_OK) or sys.platform.startswith("win"):
        return None
    blob = pickle.dumps(state)
    scratch = tempfile.TemporaryDirectory()
    scratch.cleanup()
    return pickle.loads(blob), os.getppid()


def export(rows, path):
    with open(path, "a", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["a"])
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


SLUG = re.compile(r"[^a-z0-9]+")


def describe(text, upload, image):
    first = re.match(r"([a-z]+)", text)
    pattern = re.compile(r"([0-9]+)")
    found = pattern.search(text)
    span = found.end() if found else 0
    return (
        SLUG.sub("-", text.lower()),
        first.group(1) if first else "",
        span,
        platform.system(),
        upload.temporary_file_path(),
        Image.MIME.get(image.format),
        pathlib.Path.home().resolve().joinpath("x").exists(),
        slugify(text),
        pandas.concat([pandas.DataFrame({"a": [1]})]),
    )


class Slugger:
    def sub(self, text):
        requests.post("https://hooks.example.com/slug", json={"text": text})


def not_a_pattern(text, slugger):
    slugger.sub(text)


def view(request):
    threading.Thread(target=describe, args=("a", None, None)).start()
    threading.Thread(target=not_a_pattern, args=("a", Slugger())).start()
    threading.Thread(target=snapshot, args=({}, "/tmp/x")).start()
    threading.Thread(target=export, args=([], "/tmp/x.csv")).start()
"""


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[EffectKind], set[str]]]:
    inventory = scan_project({"jobs.py": JOBS})
    return {
        j.qualname: (j.idempotency, {e.kind for e in j.effects}, {u.call for u in j.unexplained})
        for j in inventory.jobs
    }


def test_reading_the_process_and_encoding_in_memory_is_pure(scan_project: Scanner) -> None:
    verdict, _, unexplained = _jobs(scan_project)["jobs.snapshot"]
    assert verdict is Idempotency.IDEMPOTENT, unexplained


def test_csv_rows_appended_to_a_file_are_judged_by_the_file(scan_project: Scanner) -> None:
    verdict, effects, unexplained = _jobs(scan_project)["jobs.export"]
    assert EffectKind.FILE_APPEND in effects
    assert not unexplained  # writeheader/writerow are the writer's, explained
    assert verdict is not Idempotency.IDEMPOTENT


FDOPEN = """import os
import tempfile
import threading


def spool(data):
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w") as out:
        out.write(data)
    return path


def log(data, fd):
    with os.fdopen(fd, "a") as out:
        out.write(data)


def view(request):
    threading.Thread(target=spool, args=("x",)).start()
    threading.Thread(target=log, args=("x", 3)).start()
"""


def test_a_descriptor_opened_as_a_file_is_judged_by_its_mode(scan_project: Scanner) -> None:
    inventory = scan_project({"fd.py": FDOPEN})
    jobs = {j.qualname: j for j in inventory.jobs}
    spool, log = jobs["fd.spool"], jobs["fd.log"]
    assert spool.idempotency is Idempotency.IDEMPOTENT, [e.message for e in spool.evidence]
    assert {e.kind for e in spool.effects} == {EffectKind.FILE_WRITE}
    assert EffectKind.FILE_APPEND in {e.kind for e in log.effects}
    assert log.idempotency is not Idempotency.IDEMPOTENT


def test_regular_expressions_and_platform_reads_are_values(scan_project: Scanner) -> None:
    """``re.compile`` makes a Pattern, ``re.match`` and a Pattern's ``search`` a Match (a
    module-level pattern too); their methods, ``platform.*``, an upload's temporary path and
    Pillow's format registry only read."""
    verdict, effects, unexplained = _jobs(scan_project)["jobs.describe"]
    assert verdict is Idempotency.IDEMPOTENT, unexplained
    assert not effects


def test_a_project_method_named_like_a_patterns_is_still_followed(scan_project: Scanner) -> None:
    # ``slugger`` is a Slugger (its one caller hands it one), not a Pattern: its ``sub`` posts
    verdict, effects, _ = _jobs(scan_project)["jobs.not_a_pattern"]
    assert EffectKind.HTTP_POST in effects
    assert verdict is not Idempotency.IDEMPOTENT


ARCHIVES = """import threading
import zipfile


def bundle(paths, target):
    with zipfile.ZipFile(target, "w") as archive:
        for path in paths:
            archive.write(path)
        archive.writestr("README", "bundle")


def grow(path, target):
    with zipfile.ZipFile(target, mode="a") as archive:
        archive.write(path)


def unpack(source, into):
    with zipfile.ZipFile(source) as archive:
        names = archive.namelist()
        archive.extractall(into)
    return names


def list_members(source):
    return zipfile.ZipFile(source, "r").namelist()


def view(request):
    threading.Thread(target=bundle, args=([], "/tmp/x.zip")).start()
    threading.Thread(target=grow, args=("a.txt", "/tmp/x.zip")).start()
    threading.Thread(target=unpack, args=("/tmp/x.zip", "/tmp/x")).start()
    threading.Thread(target=list_members, args=("/tmp/x.zip",)).start()
"""


def test_a_zip_archive_is_judged_by_its_open_mode_as_open_is(scan_project: Scanner) -> None:
    """``ZipFile`` takes ``open``'s mode rules (the catalogue's ``like = "open"``): "w"
    writes the archive anew, "a" appends to it, a read opens nothing for writing; what is
    written into the archive is that file's effect, and extracting overwrites files."""
    jobs = {
        j.qualname: (j.idempotency, {e.kind for e in j.effects}, {u.call for u in j.unexplained})
        for j in scan_project({"archives.py": ARCHIVES}).jobs
    }
    assert jobs["archives.bundle"][:2] == (Idempotency.IDEMPOTENT, {EffectKind.FILE_WRITE})
    assert EffectKind.FILE_APPEND in jobs["archives.grow"][1]
    assert jobs["archives.grow"][0] is not Idempotency.IDEMPOTENT
    assert jobs["archives.unpack"][:2] == (Idempotency.IDEMPOTENT, {EffectKind.FILE_WRITE})
    assert jobs["archives.list_members"][0] is Idempotency.IDEMPOTENT
    assert not jobs["archives.list_members"][1]


URLS = """import threading
from urllib.parse import urldefrag, urlparse, urlsplit

import requests


def health(url):
    parsed = urlparse(url)
    requests.get(parsed._replace(path="/health").geturl(), timeout=5)


def canonical(url):
    parts = urlsplit(url)
    return parts._replace(query="", fragment="").geturl(), urldefrag(url).url


def announce(url):
    parts = urlsplit(url)
    requests.post(parts._replace(path="/announce").geturl(), timeout=5)


def view(request):
    threading.Thread(target=health, args=(request.url,)).start()
    threading.Thread(target=canonical, args=(request.url,)).start()
    threading.Thread(target=announce, args=(request.url,)).start()
"""


def test_a_parsed_url_is_the_named_tuple_urllib_documents(scan_project: Scanner) -> None:
    """urlparse / urlsplit return a ParseResult / SplitResult (named tuples): ``_replace``
    and ``geturl`` make new values, so a job that only reads a URL built so is idempotent,
    and the request it sends is still its effect."""
    jobs = {j.qualname: j for j in scan_project({"urls.py": URLS}).jobs}
    for name in ("urls.health", "urls.canonical"):
        assert jobs[name].idempotency is Idempotency.IDEMPOTENT, jobs[name].unexplained
    announce = jobs["urls.announce"]
    assert not announce.unexplained
    assert EffectKind.HTTP_POST in {e.kind for e in announce.effects}
    assert announce.idempotency is not Idempotency.IDEMPOTENT


CHAINED_OPENS = """import threading

from django.core.files.storage import default_storage


def first_lines(path):
    return open(path).readlines()


def overwrite(path, data):
    open(path, "w").write(data)


def append(path, data):
    open(path, "a").write(data)


def stored(name):
    return default_storage.open(name).read()


def store_over(name, data):
    default_storage.open(name, "w").write(data)


def view(request):
    threading.Thread(target=first_lines, args=(request.path,)).start()
    threading.Thread(target=overwrite, args=(request.path, "x")).start()
    threading.Thread(target=append, args=(request.path, "x")).start()
    threading.Thread(target=stored, args=(request.path,)).start()
    threading.Thread(target=store_over, args=(request.path, "x")).start()
"""


def test_a_file_opened_and_used_in_one_expression_is_judged_by_its_mode(
    scan_project: Scanner,
) -> None:
    """``open(p).readlines()`` is a file object's read, as ``with open(p) as f: f.read()``
    is (it was a gap); ``open(p, "w").write(d)`` writes the file anew, ``"a"`` appends. A
    Django storage's ``open`` returns a File, read the same way, written by its mode."""
    jobs = {
        j.qualname.rsplit(".", 1)[-1]: (j.idempotency, {e.kind for e in j.effects}, j.unexplained)
        for j in scan_project({"opens.py": CHAINED_OPENS}).jobs
    }
    assert jobs["first_lines"] == (Idempotency.IDEMPOTENT, set(), [])
    assert jobs["stored"] == (Idempotency.IDEMPOTENT, set(), [])
    assert jobs["overwrite"] == (Idempotency.IDEMPOTENT, {EffectKind.FILE_WRITE}, [])
    assert jobs["store_over"] == (Idempotency.IDEMPOTENT, {EffectKind.FILE_WRITE}, [])
    assert EffectKind.FILE_APPEND in jobs["append"][1]
    assert jobs["append"][0] is not Idempotency.IDEMPOTENT
