"""PgGateStore: the GateStore seam on PostgreSQL (certifications, rollouts and their
audit, job_keys, shadow evidence).

Parameterised SQL only; the schema name is quoted with ``sql.Identifier``.
Connections are autocommit; every statement here is safe to repeat (upserts,
conditional updates), so a transient error runs it again on a fresh
connection: a lost connection must not fail an attempt whose body already
ran (the guard's "key completed" write after ``pg_terminate_backend`` is the
case the load test found). A rollout change is one transaction (the row, its
audit row, under a per-job advisory lock): a transient error before its commit
runs all of it again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from queue_runtime.config import RolloutMode
from queue_runtime.errors import StoreError
from queue_runtime.pg import _shadow as shadow
from queue_runtime.pg._errors import translated
from queue_runtime.pg.connect import Conn, Connections
from queue_runtime.pg.retry import retry_transient
from queue_runtime.shadow_model import ShadowDelta, ShadowEvidence
from queue_runtime.store import (
    Certification,
    ChangeCause,
    GateSnapshot,
    KeyCounts,
    KeyState,
    KeyStatus,
    Rollout,
    RolloutChange,
)

T = TypeVar("T")

_CERT_COLUMNS = "job, fingerprint, certified_at, certified_by, figures, revoked_at, report"
_ROLLOUT_COLUMNS = "job, mode, percent, updated_at, updated_by"

INSERT_CERTIFICATION = (
    "INSERT INTO {s}.certifications (job, fingerprint, certified_by, figures, report)"
    f" VALUES (%s, %s, %s, %s, %s) RETURNING {_CERT_COLUMNS}"
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
# Every change of one job's rollout holds this lock (also when no row exists yet), so a
# read-then-write (the audit's "from", the SLO rollback's "unless inline") is never raced.
LOCK_ROLLOUT = "SELECT pg_advisory_xact_lock(hashtext(%s))"
SELECT_ROLLOUT = f"SELECT {_ROLLOUT_COLUMNS} FROM {{s}}.rollouts WHERE job = %s"
DELETE_ROLLOUT = "DELETE FROM {s}.rollouts WHERE job = %s"
_CHANGE_COLUMNS = (
    "job, from_mode, from_percent, to_mode, to_percent, changed_at, changed_by, cause, reason"
)
INSERT_CHANGE = (
    "INSERT INTO {s}.rollout_changes"
    " (job, from_mode, from_percent, to_mode, to_percent, changed_by, cause, reason)"
    f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_CHANGE_COLUMNS}"
)
SELECT_CHANGES = (
    f"SELECT {_CHANGE_COLUMNS} FROM {{s}}.rollout_changes WHERE (%s::text IS NULL OR job = %s)"
    " ORDER BY changed_at DESC, id DESC LIMIT %s"
)
CERTIFIED = "SELECT DISTINCT job, fingerprint FROM {s}.certifications WHERE revoked_at IS NULL"
# A key is taken over (a previous attempt died) or completed only by the call
# it names: same digest, or either side without one (keys from before 0003).
_SAME_CALL = (
    "({s}.job_keys.args_digest IS NULL OR EXCLUDED.args_digest IS NULL"
    " OR {s}.job_keys.args_digest = EXCLUDED.args_digest)"
)
BEGIN_KEY = f"""
INSERT INTO {{s}}.job_keys (key, job, state, job_id, args_digest)
VALUES (%(key)s, %(job)s, 'in_progress', %(job_id)s, %(digest)s)
ON CONFLICT (key) DO UPDATE SET job_id = EXCLUDED.job_id, updated_at = now(),
    args_digest = coalesce({{s}}.job_keys.args_digest, EXCLUDED.args_digest)
    WHERE {{s}}.job_keys.state = 'in_progress' AND {_SAME_CALL}
RETURNING state
"""
COMPLETE_KEY = f"""
INSERT INTO {{s}}.job_keys (key, job, state, result, job_id, args_digest)
VALUES (%(key)s, %(job)s, 'completed', %(result)s, %(job_id)s, %(digest)s)
ON CONFLICT (key) DO UPDATE SET state = 'completed', result = EXCLUDED.result,
    job_id = coalesce(EXCLUDED.job_id, {{s}}.job_keys.job_id), updated_at = now(),
    args_digest = coalesce({{s}}.job_keys.args_digest, EXCLUDED.args_digest)
    WHERE {{s}}.job_keys.state = 'in_progress' AND {_SAME_CALL}
"""
KEY_ROW = (
    "SELECT key, job, state, result, job_id, updated_at, args_digest"
    " FROM {s}.job_keys WHERE key = %s"
)
PURGE_KEYS = """
WITH gone AS (
    DELETE FROM {s}.job_keys WHERE key IN (
        SELECT key FROM {s}.job_keys
        WHERE updated_at < now() - make_interval(secs => %s) LIMIT %s
    )
    RETURNING 1
)
SELECT count(*) FROM gone
"""
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
        self,
        job: str,
        fingerprint: str,
        figures: dict[str, Any],
        who: str,
        report: dict[str, Any] | None = None,
    ) -> Certification:
        stored = None if report is None else Jsonb(report)
        row = self._one(INSERT_CERTIFICATION, (job, fingerprint, who, Jsonb(figures), stored))
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

    def upsert_rollout(
        self, job: str, mode: RolloutMode, percent: int, who: str | None, reason: str | None = None
    ) -> Rollout:
        def change(conn: Conn) -> Rollout:
            before = self._locked_rollout(conn, job)
            after = self._store_rollout(conn, job, mode, percent, who)
            self._audit(conn, _Change(job, before, after, who, ChangeCause.SET, reason))
            return after

        return self._transaction(change)

    def delete_rollout(self, job: str, who: str | None) -> Rollout | None:
        def change(conn: Conn) -> Rollout | None:
            before = self._locked_rollout(conn, job)
            if before is not None:
                conn.execute(self._render(DELETE_ROLLOUT), (job,))
                self._audit(conn, _Change(job, before, None, who, ChangeCause.UNSET, None))
            return before

        return self._transaction(change)

    def rollback_to_inline(self, job: str, who: str, reason: str) -> RolloutChange | None:
        def change(conn: Conn) -> RolloutChange | None:
            before = self._locked_rollout(conn, job)
            if before is not None and before.mode is RolloutMode.INLINE:
                return None
            after = self._store_rollout(conn, job, RolloutMode.INLINE, 0, who)
            return self._audit(conn, _Change(job, before, after, who, ChangeCause.SLO, reason))

        return self._transaction(change)

    def rollout_changes(self, job: str | None, limit: int = 50) -> list[RolloutChange]:
        return [_rollout_change(row) for row in self._all(SELECT_CHANGES, (job, job, limit))]

    def _transaction(self, fn: Callable[[Conn], T]) -> T:
        def inside(conn: Conn) -> T:
            with conn.transaction():
                return fn(conn)

        return self._run(inside)

    def _locked_rollout(self, conn: Conn, job: str) -> Rollout | None:
        conn.execute(LOCK_ROLLOUT, (f"{self._schema}.rollouts.{job}",))
        row = conn.execute(self._render(SELECT_ROLLOUT), (job,)).fetchone()
        return None if row is None else _rollout(row)

    def _store_rollout(
        self, conn: Conn, job: str, mode: RolloutMode, percent: int, who: str | None
    ) -> Rollout:
        row = conn.execute(self._render(UPSERT_ROLLOUT), (job, mode.value, percent, who)).fetchone()
        assert row is not None, "INSERT ... RETURNING returns the row"
        return _rollout(row)

    def _audit(self, conn: Conn, change: _Change) -> RolloutChange:
        row = conn.execute(self._render(INSERT_CHANGE), change.params()).fetchone()
        assert row is not None, "INSERT ... RETURNING returns the row"
        return _rollout_change(row)

    def rollouts(self) -> list[Rollout]:
        return [_rollout(row) for row in self._all(SELECT_ROLLOUTS)]

    # -- shadow evidence (queue_runtime.pg._shadow) ----------------------------------

    def add_shadow(self, deltas: Sequence[ShadowDelta]) -> None:
        if deltas:
            self._run(lambda conn: shadow.add_shadow(conn, self._schema, deltas))

    def shadow_evidence(self, job: str | None = None) -> list[ShadowEvidence]:
        return self._run(lambda conn: shadow.shadow_evidence(conn, self._schema, job))

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

    def begin_key(
        self, key: str, job: str, job_id: int | None, digest: str | None = None
    ) -> KeyState | None:
        params = {"key": key, "job": job, "job_id": job_id, "digest": digest}

        def take(conn: Conn) -> KeyState | None:
            if conn.execute(self._render(BEGIN_KEY), params).fetchone() is not None:
                return None
            found = conn.execute(self._render(KEY_ROW), (key,)).fetchone()
            if found is None:  # deleted between the two statements: take it again next time
                raise StoreError(f"idempotency key {key!r} vanished while being taken")
            return _key_state(found)

        return self._run(take)

    def complete_key(
        self, key: str, job: str, result: Any, job_id: int | None, digest: str | None = None
    ) -> None:
        params = _completion(key, job, result, job_id, digest)
        self._run(lambda c: c.execute(self._render(COMPLETE_KEY), params))

    def complete_key_in(
        self,
        conn: object,
        key: str,
        job: str,
        result: Any,
        job_id: int | None,
        digest: str | None = None,
    ) -> None:
        """In the caller's transaction: no retry, no translation (its transaction, its errors)."""
        caller = cast("psycopg.Connection[Any]", conn)
        caller.execute(self._render(COMPLETE_KEY), _completion(key, job, result, job_id, digest))

    def key_state(self, key: str) -> KeyState | None:
        found = self._run(lambda c: c.execute(self._render(KEY_ROW), (key,)).fetchone())
        return None if found is None else _key_state(found)

    def key_counts(self, job: str) -> KeyCounts:
        completed, total = self._one(KEY_COUNTS, (job,))
        return KeyCounts(completed=int(completed), total=int(total))

    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        total = 0
        while True:
            purged = int(self._one(PURGE_KEYS, (older_than_seconds, batch))[0])
            total += purged
            if purged < batch:
                return total


@dataclass(frozen=True, slots=True)
class _Change:
    """A rollout change about to be audited."""

    job: str
    before: Rollout | None
    after: Rollout | None
    who: str | None
    cause: ChangeCause
    reason: str | None

    def params(self) -> tuple[Any, ...]:
        before, after = self.before, self.after
        return (
            self.job,
            before.mode.value if before else None,
            before.percent if before else None,
            after.mode.value if after else None,
            after.percent if after else None,
            self.who,
            self.cause.value,
            self.reason,
        )


def _rollout_change(row: TupleRow) -> RolloutChange:
    job, from_mode, from_percent, to_mode, to_percent, at, who, cause, reason = row
    before = None if from_mode is None else Rollout(job, RolloutMode(from_mode), int(from_percent))
    after = (
        None if to_mode is None else Rollout(job, RolloutMode(to_mode), int(to_percent), at, who)
    )
    return RolloutChange(job, before, after, at, who, ChangeCause(cause), reason)


def _completion(
    key: str, job: str, result: Any, job_id: int | None, digest: str | None
) -> dict[str, Any]:
    return {"key": key, "job": job, "result": Jsonb(result), "job_id": job_id, "digest": digest}


def _certification(row: TupleRow) -> Certification:
    job, fingerprint, certified_at, certified_by, figures, revoked_at, report = row
    return Certification(
        job, fingerprint, certified_at, certified_by, figures or {}, revoked_at, report
    )


def _rollout(row: TupleRow) -> Rollout:
    job, mode, percent, updated_at, updated_by = row
    return Rollout(job, RolloutMode(mode), int(percent), updated_at, updated_by)


def _key_state(row: TupleRow) -> KeyState:
    key, job, state, result, job_id, updated_at, digest = row
    return KeyState(key, job, KeyStatus(state), result, job_id, updated_at, digest)
