"""A worker refuses, in one line, a queue schema older than its code's migrations.

After an upgrade of queue_runtime without `queue-runtime migrate`, a worker used
to start, claim jobs, and then fail on every round that reads a table the new
code expects (the periodic switches of 0009): a log line per round, work half
done. It now stops before serving and names the revision and the command. A
schema migrated by a newer release (a rolling deploy) is served, and a schema
migrated to head is, of course.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from queue_runtime import Settings, configure, migrate
from queue_runtime.cli import ExitCode
from queue_runtime.errors import SchemaNotMigrated
from queue_runtime.migrations import current_revision, revisions
from queue_runtime.worker import Worker
from tests.integration.test_cli_failures import flags, one_line, run

pytestmark = [pytest.mark.pg, pytest.mark.redis]

APP = """
from queue_runtime import job

@job(pool="batch")
def greet(name: str) -> str:
    return f"hello {name}"
"""


def check(settings: Settings) -> None:
    rt = configure(settings)
    try:
        Worker(rt, ["batch"], 1).check()
    finally:
        rt.close()


def test_a_schema_one_migration_behind_stops_the_worker_until_migrated(
    bare_settings: Settings, tmp_path: Path
) -> None:
    shipped = revisions()
    older, head = shipped[-2], shipped[-1]
    migrate(bare_settings, older)
    (tmp_path / "qr_schema_app.py").write_text(APP)
    worker = ("worker", "qr_schema_app", "--pool", "batch")

    done = run(tmp_path, *flags(bare_settings), *worker)
    one_line(done, ExitCode.DATABASE, f"at {older}", f"needs {head}", "queue-runtime migrate")
    with pytest.raises(SchemaNotMigrated, match=f"needs {head}"):
        check(bare_settings)

    assert run(tmp_path, *flags(bare_settings), "migrate").returncode == 0
    assert current_revision(bare_settings) == head
    check(bare_settings)  # at head: serves


def test_an_unmigrated_schema_stops_the_worker(bare_settings: Settings) -> None:
    with pytest.raises(SchemaNotMigrated, match="not migrated"):
        check(bare_settings)


def test_a_schema_a_newer_release_migrated_is_served(settings: Settings) -> None:
    # A rolling deploy: the new release migrated first; old workers keep running.
    with psycopg.connect(settings.database_url or "", autocommit=True) as conn:
        conn.execute(
            f'UPDATE "{settings.schema_name}".alembic_version SET version_num = %s',
            ("9999_from_a_newer_release",),
        )
    check(settings)
