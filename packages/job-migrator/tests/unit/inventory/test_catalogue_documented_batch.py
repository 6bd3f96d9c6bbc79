"""Calls the census's jobs were blocked on alone, catalogued from each module's docs.

Of the census's ``unknown`` jobs, 566 are blocked only by calls with no source and no
catalogue entry; the standard library's and a few widely used libraries' are read here from
their documentation: time.time_ns, stat, codecs' encode/decode, sys's encodings, threading's
introspection, asyncio.wrap_future, importlib.resources, msgspec, structlog, six's helpers,
Python-Markdown and pandas' readers and conversions. Writers stay effects or gaps."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import asyncio
import codecs
import importlib.resources
import os
import stat
import sys
import threading
import time

import markdown
import msgspec
import pandas
import six
import structlog

log = structlog.get_logger()


def inspect(path, payload, text):
    mode = stat.S_IMODE(os.stat(path).st_mode)
    raw = codecs.decode(payload, "hex")
    encoding = sys.getfilesystemencoding()
    main = threading.main_thread().name
    schema = importlib.resources.files("app").joinpath("schema.json").read_text()
    data = msgspec.json.decode(msgspec.json.encode({"a": 1}))
    html = markdown.markdown(text)
    for key, value in six.iteritems({"a": 1}):
        log.info("item", key=key, value=value)
    frame = pandas.read_csv(path)
    rows = pandas.json_normalize([{"a": {"b": 1}}])
    return mode, raw, encoding, main, schema, data, html, frame, rows, six.text_type(text)


def publish(source):
    markdown.markdownFromFile(input=source, output=source + ".html")


def stamp():
    return str(time.time_ns())


async def wrapped(future):
    return await asyncio.wrap_future(future)


def view(request):
    threading.Thread(target=inspect, args=("a.csv", b"00", "# a")).start()
    threading.Thread(target=publish, args=("a.md",)).start()
    threading.Thread(target=stamp).start()
"""


def test_documented_reads_and_conversions_decide_the_verdict(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    inspect = jobs["app.inspect"]
    assert inspect.idempotency is Idempotency.IDEMPOTENT, inspect.evidence
    assert not any("unresolved" in e.message for e in inspect.evidence)


def test_a_documented_writer_stays_an_effect(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    assert {e.kind for e in jobs["app.publish"].effects} == {EffectKind.FILE_WRITE}
    # time.time_ns mints a value per run, as time.time does
    assert {e.kind for e in jobs["app.stamp"].effects} == {EffectKind.RANDOM_ID}
