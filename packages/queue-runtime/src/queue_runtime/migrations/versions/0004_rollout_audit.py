"""The rollout audit: every change of a job's rollout mode, who made it and why.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Tables (inside the configured schema):
- ``rollout_changes``: one row per change of ``rollouts`` made through the
  runtime (``migrator rollout set|unset``, ``queue_runtime.gate.set_rollout``,
  the workers' SLO rollback): the mode before and after (NULL: no stored row,
  the configured default applied), when, by whom, the cause (set | unset |
  slo) and, for an SLO rollback, the breach. Rows are never updated.
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.rollout_changes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job text NOT NULL,
    from_mode text CHECK (from_mode IN ('inline', 'percent', 'async')),
    from_percent smallint,
    to_mode text CHECK (to_mode IN ('inline', 'percent', 'async')),
    to_percent smallint,
    changed_at timestamptz NOT NULL DEFAULT now(),
    changed_by text,
    cause text NOT NULL CHECK (cause IN ('set', 'unset', 'slo')),
    reason text
);

CREATE INDEX rollout_changes_job_idx ON {s}.rollout_changes (job, changed_at DESC);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS {s}.rollout_changes;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
