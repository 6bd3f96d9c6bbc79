"""Periodic jobs switched off and on: the current state and the audit in one table.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

- ``periodic_switches``: one row per switch of a periodic job (the dashboard's
  enable / disable on /periodic), with who and why. A job's newest row is its
  state: ``enabled = false`` and no worker enqueues its ticks
  (``JobStore.disabled_periodic``, read once per ticker round); no row, or a
  newest row ``enabled = true``: it ticks. The rows are the audit: never updated.
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.periodic_switches (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job text NOT NULL,
    enabled boolean NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now(),
    changed_by text,
    reason text
);

CREATE INDEX periodic_switches_job_idx ON {s}.periodic_switches (job, id);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS {s}.periodic_switches;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
