"""Timings and per-attempt tracebacks of finished jobs, name indexes for the listings.

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
- ``job_history_name_idx``: ``(name, id)``, so "the finished jobs of this
  name, newest first, below this id" (``queue-runtime jobs --job``, the
  dashboard's name filter) is an index range scan in keyset order. The hot
  table gets no such index on purpose: every enqueue and every claim would
  pay for it (measured: bulk enqueue -12%, drain -8%, +190 WAL bytes a job),
  and the hot table is the queue, small enough to filter by name in a scan.

Building the index takes a SHARE lock on the history table while it runs
(writes to it wait: about a second per million rows). On a large installation,
build it first with ``CREATE INDEX CONCURRENTLY`` under the same name and
definition: the migration then skips it (``IF NOT EXISTS``).
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
CREATE INDEX IF NOT EXISTS job_history_name_idx ON {s}.job_history (name, id);
"""

DOWNGRADE = """
DROP INDEX IF EXISTS {s}.job_history_name_idx;
ALTER TABLE {s}.job_history DROP COLUMN IF EXISTS started_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
