"""PgGateStore: the GateStore seam on PostgreSQL (certifications, rollouts, job_keys).

Parameterised SQL only; the schema name is quoted with ``sql.Identifier``.
Connections are autocommit; every statement here is safe to repeat (upserts,
conditional updates), so a transient error runs it again on a fresh
connection: a lost connection must not fail an attempt whose body already
ran (the guard's "key completed" write after ``pg_terminate_backend`` is the
case the load test found).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from queue_runtime.config import RolloutMode
from queue_runtime.errors import StoreError
from queue_runtime.pg.connect import Conn, Connections
from queue_runtime.pg.errors import translated
from queue_runtime.pg.retry import retry_transient
from queue_runtime.store import (
    Certification,
    GateSnapshot,
    KeyCounts,
    KeyState,
    KeyStatus,
    Rollout,
)

T = TypeVar("T")

_CERT_COLUMNS = "job, fingerprint, certified_at, certified_by, figures, revoked_at"
_ROLLOUT_COLUMNS = "job, mode, percent, updated_at, updated_by"

INSERT_CERTIFICATION = (
    "INSERT INTO {s}.certifications (job, fingerprint, certified_by, figures)"
    f" VALUES (%s, %s, %s, %s) RETURNING {_CERT_COLUMNS}"
)
REVOKE_CERTIFICATIONS = (
    "UPDATE {s}.certifications SET revoked_at = now()"
    " WHERE job = %s AND revoked_at IS NULL AND (%s::text IS NULL OR fingerprint = %s)"
)
SELECT_CERTIFICATIONS = (
    f"SELECT {_CERT_COLUMNS} FROM {{s}}.certifications"
    " WHERE (%s::text IS NULL OR job = %s) AND (%s::text IS NULL OR fingerprint = %s)"
    " AND (NOT %s OR revoked_at IS NULL)"
    " ORDER BY certified_at DESC, id DESC"
)
UPSERT_ROLLOUT = (
    "INSERT INTO {s}.rollouts (job, mode, percent, updated_by) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (job) DO UPDATE SET mode = EXCLUDED.mode, percent = EXCLUDED.percent,"
    " updated_at = now(), updated_by = EXCLUDED.updated_by"
    f" RETURNING {_ROLLOUT_COLUMNS}"
)
SELECT_ROLLOUTS = f"SELECT {_ROLLOUT_COLUMNS} FROM {{s}}.rollouts ORDER BY job"
CERTIFIED = "SELECT DISTINCT job, fingerprint FROM {s}.certifications WHERE revoked_at IS NULL"
BEGIN_KEY = """
INSERT INTO {s}.job_keys (key, job, state, job_id) VALUES (%(key)s, %(job)s, 'in_progress', %(job_id)s)
ON CONFLICT (key) DO UPDATE SET job_id = EXCLUDED.job_id, updated_at = now()
    WHERE {s}.job_keys.state = 'in_progress'
RETURNING state
"""
COMPLETE_KEY = """
INSERT INTO {s}.job_keys (key, job, state, result, job_id)
VALUES (%(key)s, %(job)s, 'completed', %(result)s, %(job_id)s)
ON CONFLICT (key) DO UPDATE SET state = 'completed', result = EXCLUDED.result,
    job_id = coalesce(EXCLUDED.job_id, {s}.job_keys.job_id), updated_at = now()
    WHERE {s}.job_keys.state = 'in_progress'
"""
KEY_ROW = "SELECT key, job, state, result, job_id, updated_at FROM {s}.job_keys WHERE key = %s"
KEY_COUNTS = (
    "SELECT count(*) FILTER (WHERE state = 'completed'), count(*) FROM {s}.job_keys WHERE job = %s"
)


class PgGateStore:
    def __init__(self, connections: Connections, schema: str) -> None:
        self._connections = connections
        self._schema = schema
        ident = sql.Identifier(schema)
        self._render: Callable[[str], sql.Composed] = lambda text: sql.SQL(text).format(s=ident)

    def close(self) -> None:
        self._connections.close()

    def _run(self, fn: Callable[[Conn], T]) -> T:
        def once() -> T:
            with self._connections.connection() as conn:
                return fn(conn)

        with translated(self._schema):
            return retry_transient(once)

    def _one(self, text: str, params: Any) -> TupleRow:
        row: TupleRow | None = self._run(lambda c: c.execute(self._render(text), params).fetchone())
        assert row is not None, "INSERT ... RETURNING returns the row"
        return row

    def _all(self, text: str, params: Any = None) -> list[TupleRow]:
        return self._run(lambda c: c.execute(self._render(text), params).fetchall())

    # -- certifications -----------------------------------------------------------

    def insert_certification(
        self, job: str, fingerprint: str, figures: dict[str, Any], who: str
    ) -> Certification:
        row = self._one(INSERT_CERTIFICATION, (job, fingerprint, who, Jsonb(figures)))
        return _certification(row)

    def revoke_certifications(self, job: str, fingerprint: str | None) -> int:
        params = (job, fingerprint, fingerprint)
        return self._run(lambda c: c.execute(self._render(REVOKE_CERTIFICATIONS), params).rowcount)

    def certifications(
        self, job: str | None, fingerprint: str | None, valid_only: bool
    ) -> list[Certification]:
        params = (job, job, fingerprint, fingerprint, valid_only)
        return [_certification(row) for row in self._all(SELECT_CERTIFICATIONS, params)]

    # -- rollouts -----------------------------------------------------------------

    def upsert_rollout(self, job: str, mode: RolloutMode, percent: int, who: str | None) -> Rollout:
        return _rollout(self._one(UPSERT_ROLLOUT, (job, mode.value, percent, who)))

    def rollouts(self) -> list[Rollout]:
        return [_rollout(row) for row in self._all(SELECT_ROLLOUTS)]

    def snapshot(self) -> GateSnapshot:
        """Every stored rollout and every valid certification, one round trip each."""

        def both(conn: Conn) -> GateSnapshot:
            rollouts = [_rollout(r) for r in conn.execute(self._render(SELECT_ROLLOUTS))]
            certified: dict[str, set[str]] = {}
            for job, fingerprint in conn.execute(self._render(CERTIFIED)):
                certified.setdefault(job, set()).add(fingerprint)
            return GateSnapshot(
                rollouts={r.job: r for r in rollouts},
                certified={job: frozenset(fps) for job, fps in certified.items()},
            )

        return self._run(both)

    # -- job_keys (the execution guard) ------------------------------------------

    def begin_key(self, key: str, job: str, job_id: int | None) -> KeyState | None:
        params = {"key": key, "job": job, "job_id": job_id}

        def take(conn: Conn) -> KeyState | None:
            if conn.execute(self._render(BEGIN_KEY), params).fetchone() is not None:
                return None
            found = conn.execute(self._render(KEY_ROW), (key,)).fetchone()
            if found is None:  # deleted between the two statements: take it again next time
                raise StoreError(f"idempotency key {key!r} vanished while being taken")
            return _key_state(found)

        return self._run(take)

    def complete_key(self, key: str, job: str, result: Any, job_id: int | None) -> None:
        params = _completion(key, job, result, job_id)
        self._run(lambda c: c.execute(self._render(COMPLETE_KEY), params))

    def complete_key_in(
        self, conn: object, key: str, job: str, result: Any, job_id: int | None
    ) -> None:
        """In the caller's transaction: no retry, no translation (its transaction, its errors)."""
        caller = cast("psycopg.Connection[Any]", conn)
        caller.execute(self._render(COMPLETE_KEY), _completion(key, job, result, job_id))

    def key_state(self, key: str) -> KeyState | None:
        found = self._run(lambda c: c.execute(self._render(KEY_ROW), (key,)).fetchone())
        return None if found is None else _key_state(found)

    def key_counts(self, job: str) -> KeyCounts:
        completed, total = self._one(KEY_COUNTS, (job,))
        return KeyCounts(completed=int(completed), total=int(total))


def _completion(key: str, job: str, result: Any, job_id: int | None) -> dict[str, Any]:
    return {"key": key, "job": job, "result": Jsonb(result), "job_id": job_id}


def _certification(row: TupleRow) -> Certification:
    job, fingerprint, certified_at, certified_by, figures, revoked_at = row
    return Certification(job, fingerprint, certified_at, certified_by, figures or {}, revoked_at)


def _rollout(row: TupleRow) -> Rollout:
    job, mode, percent, updated_at, updated_by = row
    return Rollout(job, RolloutMode(mode), int(percent), updated_at, updated_by)


def _key_state(row: TupleRow) -> KeyState:
    key, job, state, result, job_id, updated_at = row
    return KeyState(key, job, KeyStatus(state), result, job_id, updated_at)
