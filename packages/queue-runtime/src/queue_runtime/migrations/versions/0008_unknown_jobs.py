"""Jobs no worker knows yet: when a worker first found a job's name unregistered.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

- ``jobs.unknown_since`` (nullable): set (once) by the first worker that claimed
  the job without having its name registered and handed it back
  (``JobStore.defer(..., unknown=True)``). The claim returns how long ago that
  was, on the database's clock; a worker dead-letters the job only once that
  exceeds ``unknown_job_deadline`` (``queue_runtime.worker._unknown``). NULL for
  every other job; the column leaves the hot table with its row.
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE {s}.jobs ADD COLUMN unknown_since timestamptz;
"""

DOWNGRADE = """
ALTER TABLE {s}.jobs DROP COLUMN IF EXISTS unknown_since;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
