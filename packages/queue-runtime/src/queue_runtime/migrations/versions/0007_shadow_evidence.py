"""Shadow evidence: what inline runs showed of each job's arguments, per code fingerprint.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02

Tables (inside the configured schema):
- ``shadow_evidence``: one row per (job, fingerprint of its code): the calls
  whose arguments took the encode / decode / encode round trip while the job
  ran inline (``checked``), the round trips that failed (``failed``), the calls
  no codec could encode (``unencodable``, run as the site ran them before),
  the newest failures (``examples``: [{param, type, reason, fallback}]), when
  the record was first and last flushed. Processes add their counts with an
  UPSERT (``queue_runtime.pg._shadow``); ``migrator rollout set`` reads it.
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.shadow_evidence (
    job text NOT NULL,
    fingerprint text NOT NULL,
    checked bigint NOT NULL DEFAULT 0 CHECK (checked >= 0),
    failed bigint NOT NULL DEFAULT 0 CHECK (failed >= 0),
    unencodable bigint NOT NULL DEFAULT 0 CHECK (unencodable >= 0),
    examples jsonb NOT NULL DEFAULT '[]'::jsonb,
    first_seen timestamptz NOT NULL DEFAULT now(),
    last_seen timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job, fingerprint)
);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS {s}.shadow_evidence;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
