"""Timings and per-attempt tracebacks of finished jobs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

- ``job_history.started_at``: when the attempt that finished the job started
  (its claim). The statements that move a running job into the history
  (complete, fail for good, rescue on the last attempt, cancel of a running
  attempt) copy ``jobs.claimed_at``; a job cancelled before it ran has none.
  Rows finished before this migration keep NULL.
- ``errors`` (``jobs`` and ``job_history``, jsonb, unchanged type): each
  failed attempt's entry now also holds its ``traceback`` (clipped to
  ``store.TRACEBACK_CHARS``) and ``started`` (the attempt's claim), and the
  array keeps the last ``store.KEPT_ATTEMPTS`` entries only (see
  ``pg/queries.py``). Older entries are left as they are.
- No name index: a ``(name, id)`` index made listings by job name exact and
  cheap, but cost every enqueue and claim (on ``jobs``: bulk enqueue -12%,
  drain -8%) and every completion (on ``job_history``: drain -5%, +105 WAL
  bytes a job). Listings filter by name as they scan (the dashboard within a
  window of ids per page); an installation that lists by name a lot can add
  ``CREATE INDEX CONCURRENTLY job_history_name_idx ON job_history (name, id)``
  itself, and the listings use it.
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE {s}.job_history ADD COLUMN started_at timestamptz;
"""

DOWNGRADE = """
ALTER TABLE {s}.job_history DROP COLUMN IF EXISTS started_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
