"""The gate, rollout modes and the execution guard.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Tables (inside the configured schema):
- ``certifications``: a passed load test for one job at one fingerprint of its
  code (who, when, the figures); revoking sets ``revoked_at`` (rows are kept).
- ``rollouts``: one row per job whose rollout mode was set (inline | percent |
  async); jobs without a row use ``Settings.default_rollout``.
- ``job_keys``: the execution guard; one row per idempotency key of a guarded
  run: in_progress, then completed with the result.
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.certifications (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job text NOT NULL,
    fingerprint text NOT NULL,
    certified_at timestamptz NOT NULL DEFAULT now(),
    certified_by text NOT NULL,
    figures jsonb NOT NULL DEFAULT '{{}}'::jsonb,
    revoked_at timestamptz
);

CREATE INDEX certifications_job_idx ON {s}.certifications (job, fingerprint);

CREATE TABLE {s}.rollouts (
    job text PRIMARY KEY,
    mode text NOT NULL CHECK (mode IN ('inline', 'percent', 'async')),
    percent smallint NOT NULL DEFAULT 0 CHECK (percent BETWEEN 0 AND 100),
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text
);

CREATE TABLE {s}.job_keys (
    key text PRIMARY KEY,
    job text NOT NULL,
    state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
    result jsonb,
    job_id bigint,
    updated_at timestamptz NOT NULL DEFAULT now()
);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS {s}.job_keys;
DROP TABLE IF EXISTS {s}.rollouts;
DROP TABLE IF EXISTS {s}.certifications;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
