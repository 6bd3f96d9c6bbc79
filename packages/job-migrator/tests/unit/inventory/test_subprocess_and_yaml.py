"""What the job does with a program it started, and PyYAML's dumpers and loaders.

Reading a started program's pipes, waiting for it, signalling it are part of that one run:
the run itself (``subprocess.Popen``) stays the effect the scan cannot see into, and nothing
else is left unexplained. ``yaml.dump`` builds text; a file it is written to is judged by
how the job opened it."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory, Job

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

JOBS = """import subprocess
import threading

import yaml


def convert(path):
    proc = subprocess.Popen(["convert", path, path + ".png"], stdout=subprocess.PIPE)
    out = proc.stdout.read()
    proc.wait()
    return out


def render(data):
    return yaml.safe_load(yaml.dump(data))


def log(data, path):
    with open(path, "a") as out:
        yaml.safe_dump(data, out)


def view(request):
    threading.Thread(target=convert, args=("a",)).start()
    threading.Thread(target=render, args=({},)).start()
    threading.Thread(target=log, args=({}, "/tmp/log.yaml")).start()
"""


def _jobs(scan_project: Scanner) -> dict[str, Job]:
    return {j.qualname: j for j in scan_project({"jobs.py": JOBS}).jobs}


def test_a_started_programs_pipes_leave_only_the_program_unknown(scan_project: Scanner) -> None:
    job = _jobs(scan_project)["jobs.convert"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert {u.call for u in job.unexplained} <= {"subprocess.Popen"}


def test_dumping_and_loading_yaml_is_pure(scan_project: Scanner) -> None:
    job = _jobs(scan_project)["jobs.render"]
    assert job.idempotency is Idempotency.IDEMPOTENT


def test_yaml_appended_to_a_file_is_judged_by_the_file(scan_project: Scanner) -> None:
    job = _jobs(scan_project)["jobs.log"]
    assert EffectKind.FILE_APPEND in {e.kind for e in job.effects}
    assert job.idempotency is not Idempotency.IDEMPOTENT
