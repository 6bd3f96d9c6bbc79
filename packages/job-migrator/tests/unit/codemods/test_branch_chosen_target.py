"""A spawn whose function an ``if`` chose: never rewritten as one of them.

``writer`` is ``to_csv`` on one path and ``to_tsv`` on the other. The scan used to read it
as the last one written (``to_tsv``), and apply rewrote the thread into
``writer.options(...).enqueue(rows)``, which breaks the request that chose ``to_csv`` (not
a job, it has no ``options``) and would move a non-idempotent call under an idempotent
verdict; and ``writer = None`` first, then ``to_tsv`` in an ``if``, was read as ``to_tsv``
although ``Thread(target=None)`` runs nothing (rewritten, the request that left it None
would fail on ``None.options``); and a module global a set-up function rebinds
(``global EXPORTER``) was read as its first value, and a name imported in a ``try`` and
again in its ``except ImportError`` as the project's one. A real scan, then apply's planning, in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory import scan
from inventory.models import Idempotency

VIEWS = """import threading

import requests


def to_csv(rows):
    requests.post("https://exports.example/csv", json=rows)


def to_tsv(rows):
    requests.get("https://exports.example/tsv", params={"rows": rows})


def export(fmt, rows):
    if fmt == "csv":
        writer = to_csv
    else:
        writer = to_tsv
    threading.Thread(target=writer, args=(rows,)).start()


def export_later(fmt, rows):
    if fmt == "csv":
        writer = to_csv
    else:
        writer = to_tsv

    def run():
        writer(rows)

    threading.Thread(target=run).start()


def export_tsv(rows):
    writer = None
    if rows:
        writer = to_tsv
    threading.Thread(target=writer, args=(rows,)).start()


EXPORTER = to_tsv


def configure(fmt):
    global EXPORTER
    if fmt == "csv":
        EXPORTER = to_csv


def export_configured(rows):
    threading.Thread(target=EXPORTER, args=(rows,)).start()


try:
    from fastexport import upload
except ImportError:
    from app.upload import upload


def export_uploaded(rows):
    threading.Thread(target=upload, args=(rows,)).start()
"""
UPLOAD = """import requests


def upload(rows):
    requests.put("https://exports.example/latest", json=rows)
"""


def test_a_target_an_if_chose_is_unknown_and_apply_leaves_it(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = write_files({"app/__init__.py": "", "app/views.py": VIEWS, "app/upload.py": UPLOAD})
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    sites = {s.enclosing_function: s for s in inventory.sites}

    chosen = sites["app.views.export"]
    assert chosen.job == "unknown"
    assert "assigned different callables: only known at run time" in chosen.unresolved_reason
    # the closure calls whichever the if chose: both are followed, and the POST decides
    jobs = {j.qualname: j for j in inventory.jobs}
    assert jobs["app.views.export_later.<locals>.run"].idempotency is Idempotency.NON_IDEMPOTENT
    # bound to None first: ``Thread(target=None)`` runs nothing, so the spawn is either
    # nothing or to_tsv, never to_tsv for sure
    assert sites["app.views.export_tsv"].job == "unknown"
    # a module global a set-up function rebinds holds whatever the set-up chose
    configured = sites["app.views.export_configured"]
    assert configured.job == "unknown"
    assert "module global 'EXPORTER', which a function rebinds" in configured.unresolved_reason
    # a name the module imports in a try and again in its except: the library's where installed
    uploaded = sites["app.views.export_uploaded"]
    assert uploaded.job == "unknown"
    assert "bound by more than one statement of the module" in uploaded.unresolved_reason

    result = plan_apply(root, inventory, scanner=None)
    outcomes = {o.site.enclosing_function: o for o in result.outcomes}
    assert outcomes["app.views.export"].status is Status.SKIPPED
    assert outcomes["app.views.export_later"].status is not Status.REWRITTEN
    assert outcomes["app.views.export_tsv"].status is Status.SKIPPED
    assert outcomes["app.views.export_configured"].status is Status.SKIPPED
    assert outcomes["app.views.export_uploaded"].status is Status.SKIPPED
    assert result.changes == []


TRIED = """import requests


def to_csv(rows):
    requests.post("https://exports.example/csv", json=rows)


def to_tsv(rows):
    requests.get("https://exports.example/tsv", params={"rows": rows})


def export(request, rows):
    try:
        writer = to_csv
        request.validate()
    except ValueError:
        writer = to_tsv
    writer(rows)


def export_tsv(request, rows):
    w = to_tsv
    w(rows)
"""


def test_a_call_through_a_name_a_try_and_its_handler_bind_follows_both_and_stays(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """``writer`` is ``to_csv`` when the body ran to its end and ``to_tsv`` when it raised:
    the call is found for both (the POST, non-idempotent, among them), and neither moves.
    A call through a local name bound once stays too, with a reason that is true (the call
    is there, written through another name): called by the job's name, it moves."""
    root = write_files({"app/__init__.py": "", "app/views.py": TRIED})
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    found = {(s.enclosing_function, s.job) for s in inventory.sites}
    assert ("app.views.export", "app.views.to_csv") in found
    assert ("app.views.export", "app.views.to_tsv") in found

    outcomes = plan_apply(root, inventory, scanner=None).outcomes
    by_site = {(o.site.enclosing_function, o.site.job): o for o in outcomes}
    assert all(o.status is not Status.REWRITTEN for o in outcomes)
    through = by_site[("app.views.export_tsv", "app.views.to_tsv")].reason
    assert through.startswith("line 23 calls the job through `w`, a local name bound to `to_tsv`")

    root = write_files(
        {"app/views.py": TRIED.replace("    w = to_tsv\n    w(rows)", "    to_tsv(rows)")}
    )
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    by_site = {
        o.site.enclosing_function: o for o in plan_apply(root, inventory, scanner=None).outcomes
    }
    assert by_site["app.views.export_tsv"].status is Status.REWRITTEN, by_site[
        "app.views.export_tsv"
    ].reason
