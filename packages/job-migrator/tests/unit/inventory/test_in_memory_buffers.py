"""In-memory streams (io.StringIO, io.BytesIO) are buffers of the process: a job that builds
an export in one, seeks and reads it back has no effect a retry repeats; the file it then
writes is judged by how it opens it."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

JOBS = """import io
import threading


def render(rows):
    text = io.StringIO()
    for row in rows:
        text.write(",".join(row) + "\\n")
    text.seek(0)
    data = io.BytesIO()
    data.write(text.read().encode())
    data.seek(0)
    return data.read()


def export(rows, path):
    with open(path, "a") as out:
        out.write(render(rows).decode())


def view(request):
    threading.Thread(target=render, args=([["a"]],)).start()
    threading.Thread(target=export, args=([["a"]], "/tmp/export.csv")).start()
"""


def test_a_buffer_in_memory_has_no_effect(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"jobs.py": JOBS}).jobs}
    render = jobs["jobs.render"]
    assert render.idempotency is Idempotency.IDEMPOTENT
    assert not render.effects and not render.unexplained


def test_appending_the_buffer_to_a_file_is_still_judged_by_the_file(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"jobs.py": JOBS}).jobs}
    export = jobs["jobs.export"]
    assert EffectKind.FILE_APPEND in {e.kind for e in export.effects}
    assert export.idempotency is not Idempotency.IDEMPOTENT
