"""One call in a request handler is one site of its job, however many ways it resolves.

``EXPORTERS[fmt].export(rows)`` over a module-level table of instances runs the method of
one of the table's classes; when they all inherit the same ``export``, every member
resolves to that one method, and the call is one site of it (once it was one per member:
the same line listed twice in the report, and counted twice).
"""

from __future__ import annotations

import textwrap

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import Idempotency

_EXPORTERS = """
import requests

class BaseExporter:
    def export(self, rows):
        return self.generate(rows)

    def generate(self, rows):
        raise NotImplementedError

class CsvExporter(BaseExporter):
    def generate(self, rows):
        return ",".join(rows)

class RemoteExporter(BaseExporter):
    def generate(self, rows):
        return requests.post("https://render.example.com", json=rows).content

class PlainExporter(BaseExporter):
    def export(self, rows):
        return list(rows)

EXPORT_FORMATS = {"csv": CsvExporter(), "remote": RemoteExporter()}
MIXED = {"csv": CsvExporter(), "plain": PlainExporter(), "remote": RemoteExporter()}
"""

_VIEWS = """
from flask import Flask, request

from shop.exporters import EXPORT_FORMATS, MIXED

app = Flask(__name__)

@app.post("/export/<fmt>")
def export(fmt):
    EXPORT_FORMATS[fmt].export(request.json)
    return "ok"

@app.post("/mixed/<fmt>")
def mixed(fmt):
    MIXED[fmt].export(request.json)
    return "ok"
"""


def _sites() -> list[tuple[str, int, str]]:
    summaries = [
        extract_source("", "shop/__init__.py", "shop"),
        extract_source(textwrap.dedent(_EXPORTERS), "shop/exporters.py", "shop.exporters"),
        extract_source(textwrap.dedent(_VIEWS), "shop/views.py", "shop.views"),
    ]
    sites, jobs = classify(summaries, MigratorConfig(), Catalogue.load(), None)
    verdicts = {job.qualname: job.idempotency for job in jobs}
    assert verdicts["shop.exporters.BaseExporter.export"] is Idempotency.NON_IDEMPOTENT
    return [(s.enclosing_function, s.location.line, s.job) for s in sites]


def test_members_inheriting_one_method_make_one_site() -> None:
    found = [s for s in _sites() if s[0] == "shop.views.export"]
    assert found == [("shop.views.export", 10, "shop.exporters.BaseExporter.export")]


def test_members_with_their_own_method_stay_a_site_each_where_slow() -> None:
    # PlainExporter.export is its own (and does no slow work): the call is still one site
    # of the inherited export, which the other two members run.
    found = [s for s in _sites() if s[0] == "shop.views.mixed"]
    assert found == [("shop.views.mixed", 15, "shop.exporters.BaseExporter.export")]
