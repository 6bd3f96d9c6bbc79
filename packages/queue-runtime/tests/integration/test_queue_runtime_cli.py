"""The ``queue-runtime`` command line: migrate, status, dlq (the worker: test_worker/test_faults)."""

from __future__ import annotations

import json
import re

import pytest

from queue_runtime import JobStatus, Settings, configure, get_job
from queue_runtime.cli import main
from queue_runtime.runtime import Runtime
from queue_runtime.store import Failure
from tests.integration import fault_app

pytestmark = [pytest.mark.pg, pytest.mark.redis]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def flags(rt: Runtime) -> list[str]:
    s = rt.settings
    return ["--database-url", s.database_url or "", "--schema", s.schema_name]


def dead_job(rt: Runtime, n: int) -> int:
    handle = fault_app.poison.enqueue(n)
    (claimed,) = rt.store.claim("batch", 1, "cli-test")
    rt.store.fail(Failure(claimed.id, claimed.attempt, f"ValueError: poison {n}", retry_at=None))
    return handle.id


def test_migrate_creates_the_schema(
    bare_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn, schema = bare_settings.database_url or "", bare_settings.schema_name
    code, out = run(capsys, "--database-url", dsn, "--schema", schema, "migrate")
    assert code == 0 and f"schema {schema} is at head" in out
    code, out = run(capsys, "--database-url", dsn, "--schema", schema, "status")
    rows = [line.split() for line in out.splitlines()[1:]]
    assert code == 0 and sorted(r[0] for r in rows) == ["batch", "transactional"]
    assert all(r[1] == "0" for r in rows)


def test_status_is_an_aligned_table_per_pool(
    runtime: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    dead_job(runtime, 9)
    for n in range(3):
        fault_app.work.enqueue(n)
    fault_app.urgent.enqueue(1)
    code, out = run(capsys, *flags(runtime), "status")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == [
        "pool",
        "depth",
        "scheduled",
        "lag",
        "throughput/min",
        "running",
        "dlq",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["batch"][1] == "3" and rows["batch"][6] == "1"
    assert rows["transactional"][1] == "1"
    starts = {tuple(m.start() for m in re.finditer(r"\S+", line)) for line in lines}
    assert len(starts) == 1, out  # every column starts at the same offset on every line
    code, out = run(capsys, *flags(runtime), "status", "--json")
    by_pool = {s["pool"]: s for s in json.loads(out)}
    assert by_pool["batch"]["depth"] == 3 and by_pool["batch"]["dead"] == 1


def test_dlq_list_show_replay_and_purge(
    runtime: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = dead_job(runtime, 1), dead_job(runtime, 2)
    code, out = run(capsys, *flags(runtime), "dlq", "list")
    assert code == 0 and "ValueError: poison 1" in out and str(second) in out
    code, out = run(capsys, *flags(runtime), "dlq", "list", "--json")
    assert sorted(r["id"] for r in json.loads(out)) == sorted([first, second])

    code, out = run(capsys, *flags(runtime), "dlq", "show", str(first), "--json")
    shown = json.loads(out)
    assert (code, shown["status"], shown["args"]) == (0, "dead", {"n": 1})

    code, out = run(capsys, *flags(runtime), "dlq", "replay", str(first))
    assert code == 0 and "1 job(s) replayed" in out
    new_id = int(out.split(" as ")[1].split()[0])
    assert get_job(new_id).status() is JobStatus.QUEUED
    assert main([*flags(runtime), "dlq", "replay", str(first)]) == 1  # no longer dead
    assert "1 of the given id(s) are not in the DLQ" in capsys.readouterr().err

    code, out = run(capsys, *flags(runtime), "dlq", "purge", "--all")
    assert code == 0
    code, out = run(capsys, *flags(runtime), "dlq", "list")
    assert "the dead-letter queue is empty" in out


def test_dlq_replay_needs_ids_or_all(runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*flags(runtime), "dlq", "replay"]) == 2
    assert main([*flags(runtime), "dlq", "purge", "1", "--all"]) == 2


def test_unknown_job_id_is_an_error(runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*flags(runtime), "dlq", "show", "999999"]) == 1
    assert "no job 999999" in capsys.readouterr().err


def test_configure_in_app_module_is_kept_by_the_worker_command(settings: Settings) -> None:
    # The CLI uses the runtime the app configured; flags only override fields of it.
    configure(settings)
    from queue_runtime.cli import _parser, _runtime

    args = _parser().parse_args(["--redis-prefix", "other", "status"])
    rt = _runtime(args, keep_app_config=True)
    assert rt.settings.schema_name == settings.schema_name
    assert rt.settings.redis_prefix == "other"
    rt.close()
