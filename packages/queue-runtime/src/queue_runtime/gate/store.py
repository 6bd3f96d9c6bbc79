"""The gate's tables in PostgreSQL: certifications, rollouts, job_keys.

Parameterised SQL only; the schema name is quoted with ``sql.Identifier``.
Every function takes the Runtime and uses its connection pool (autocommit;
multi-statement operations open a transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from queue_runtime.config import RolloutMode
from queue_runtime.errors import SchemaNotMigrated, StoreError
from queue_runtime.gate.model import Certification, Rollout
from queue_runtime.retry import retry_transient

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

T = TypeVar("T")
Conn = psycopg.Connection[Any]

_CERT_COLUMNS = "job, fingerprint, certified_at, certified_by, figures, revoked_at"
_ROLLOUT_COLUMNS = "job, mode, percent, updated_at, updated_by"


def query(runtime: Runtime, text: str) -> sql.Composed:
    """``text`` with ``{s}`` replaced by the runtime's schema, quoted."""
    return sql.SQL(text).format(s=sql.Identifier(runtime.settings.schema_name))


@contextmanager
def _translated(runtime: Runtime) -> Iterator[None]:
    """Missing gate tables become SchemaNotMigrated, other database errors StoreError."""
    try:
        yield
    except psycopg.errors.UndefinedTable as exc:
        raise SchemaNotMigrated(
            f"no gate tables in schema {runtime.settings.schema_name!r} (revision 0002): {exc}"
        ) from exc
    except psycopg.Error as exc:
        raise StoreError(f"{type(exc).__name__}: {exc}") from exc


@contextmanager
def connection(runtime: Runtime) -> Iterator[Conn]:
    """A pooled connection, errors translated as in :func:`_translated`."""
    with _translated(runtime), runtime.pool.connection() as conn:
        yield conn


def run(runtime: Runtime, fn: Callable[[Conn], T]) -> T:
    """``fn`` on a pooled connection, again on a fresh one after a transient error.

    Every statement here is safe to repeat (upserts, conditional updates), and
    a lost connection must not fail an attempt whose body already ran: the
    guard's "key completed" write after ``pg_terminate_backend`` is the case
    the load test found.
    """

    def once() -> T:
        with runtime.pool.connection() as conn:
            return fn(conn)

    with _translated(runtime):
        return retry_transient(once)


# -- certifications -----------------------------------------------------------


def insert_certification(
    runtime: Runtime, job: str, fingerprint: str, figures: dict[str, Any], who: str
) -> Certification:
    text = (
        "INSERT INTO {s}.certifications (job, fingerprint, certified_by, figures)"
        f" VALUES (%s, %s, %s, %s) RETURNING {_CERT_COLUMNS}"
    )
    params = (job, fingerprint, who, Jsonb(figures))
    row = run(runtime, lambda c: c.execute(query(runtime, text), params).fetchone())
    assert row is not None, "INSERT ... RETURNING returns the row"
    return _certification(row)


def revoke_certifications(runtime: Runtime, job: str, fingerprint: str | None) -> int:
    text = (
        "UPDATE {s}.certifications SET revoked_at = now()"
        " WHERE job = %s AND revoked_at IS NULL AND (%s::text IS NULL OR fingerprint = %s)"
    )
    params = (job, fingerprint, fingerprint)
    return run(runtime, lambda c: c.execute(query(runtime, text), params).rowcount)


def select_certifications(
    runtime: Runtime, job: str | None, fingerprint: str | None, valid_only: bool
) -> list[Certification]:
    text = (
        f"SELECT {_CERT_COLUMNS} FROM {{s}}.certifications"
        " WHERE (%s::text IS NULL OR job = %s) AND (%s::text IS NULL OR fingerprint = %s)"
        " AND (NOT %s OR revoked_at IS NULL)"
        " ORDER BY certified_at DESC, id DESC"
    )
    params = (job, job, fingerprint, fingerprint, valid_only)
    found = run(runtime, lambda c: c.execute(query(runtime, text), params).fetchall())
    return [_certification(row) for row in found]


def _certification(row: Any) -> Certification:
    job, fingerprint, certified_at, certified_by, figures, revoked_at = row
    return Certification(job, fingerprint, certified_at, certified_by, figures or {}, revoked_at)


# -- rollouts -----------------------------------------------------------------


def upsert_rollout(
    runtime: Runtime, job: str, mode: RolloutMode, percent: int, who: str | None
) -> Rollout:
    text = (
        "INSERT INTO {s}.rollouts (job, mode, percent, updated_by) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (job) DO UPDATE SET mode = EXCLUDED.mode, percent = EXCLUDED.percent,"
        " updated_at = now(), updated_by = EXCLUDED.updated_by"
        f" RETURNING {_ROLLOUT_COLUMNS}"
    )
    params = (job, mode.value, percent, who)
    row = run(runtime, lambda c: c.execute(query(runtime, text), params).fetchone())
    assert row is not None, "INSERT ... RETURNING returns the row"
    return _rollout(row)


def select_rollouts(runtime: Runtime) -> list[Rollout]:
    text = f"SELECT {_ROLLOUT_COLUMNS} FROM {{s}}.rollouts ORDER BY job"
    return [
        _rollout(row) for row in run(runtime, lambda c: c.execute(query(runtime, text)).fetchall())
    ]


def snapshot(runtime: Runtime) -> tuple[list[Rollout], set[tuple[str, str]]]:
    """Every stored rollout and every valid (job, fingerprint) certification, one round trip each."""
    rollouts_sql = query(runtime, f"SELECT {_ROLLOUT_COLUMNS} FROM {{s}}.rollouts")
    certified_sql = query(
        runtime, "SELECT DISTINCT job, fingerprint FROM {s}.certifications WHERE revoked_at IS NULL"
    )

    def both(conn: Conn) -> tuple[list[Rollout], set[tuple[str, str]]]:
        rollouts = [_rollout(row) for row in conn.execute(rollouts_sql).fetchall()]
        certified = {(row[0], row[1]) for row in conn.execute(certified_sql).fetchall()}
        return rollouts, certified

    return run(runtime, both)


def _rollout(row: Any) -> Rollout:
    job, mode, percent, updated_at, updated_by = row
    return Rollout(job, RolloutMode(mode), int(percent), updated_at, updated_by)


# -- job_keys (the execution guard) ------------------------------------------

BEGIN_KEY = """
INSERT INTO {s}.job_keys (key, job, state, job_id) VALUES (%(key)s, %(job)s, 'in_progress', %(job_id)s)
ON CONFLICT (key) DO UPDATE SET job_id = EXCLUDED.job_id, updated_at = now()
    WHERE {s}.job_keys.state = 'in_progress'
RETURNING state
"""
STORED_KEY = "SELECT state, result FROM {s}.job_keys WHERE key = %s"
COMPLETE_KEY = """
INSERT INTO {s}.job_keys (key, job, state, result, job_id)
VALUES (%(key)s, %(job)s, 'completed', %(result)s, %(job_id)s)
ON CONFLICT (key) DO UPDATE SET state = 'completed', result = EXCLUDED.result,
    job_id = coalesce(EXCLUDED.job_id, {s}.job_keys.job_id), updated_at = now()
    WHERE {s}.job_keys.state = 'in_progress'
"""
KEY_ROW = "SELECT key, job, state, result, job_id, updated_at FROM {s}.job_keys WHERE key = %s"
