"""Cancel requests for running jobs, paused pools.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Tables (inside the configured schema):
- ``cancel_requests``: one row per running job an operator asked to cancel
  (``queue-runtime cancel``, ``JobHandle.cancel()``). Workers poll the rows of
  the jobs they hold and hand the request to the job's context; the row goes
  when the attempt ends cancelled, or with the next cancel once its job has
  left ``jobs``. Jobs that have not started are cancelled at once: they never
  get a row here.
- ``paused_pools``: one row per paused pool (``queue-runtime pause POOL``):
  every worker claims nothing from it until the row is deleted (``resume``).
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.cancel_requests (
    job_id bigint PRIMARY KEY,
    requested_at timestamptz NOT NULL DEFAULT now(),
    requested_by text
);

CREATE TABLE {s}.paused_pools (
    pool text PRIMARY KEY,
    paused_at timestamptz NOT NULL DEFAULT now(),
    paused_by text
);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS {s}.paused_pools;
DROP TABLE IF EXISTS {s}.cancel_requests;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
