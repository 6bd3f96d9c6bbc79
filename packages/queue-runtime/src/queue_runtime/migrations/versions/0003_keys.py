"""Keys that name one call, key retention, certifications that keep their report.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06

Columns (inside the configured schema):
- ``idempotency_keys.args_digest``: sha256 of the job's name and arguments
  (``queue_runtime.store.args_digest``); an enqueue of a known key with
  another digest is refused. NULL on keys taken before this revision: they
  match any call, as they did.
- ``idempotency_keys.created_at``: when the key was taken, for key retention
  (``Settings.key_retention``); keys taken before this revision count from
  the upgrade.
- ``job_keys.args_digest``: the same digest for the execution guard's keys;
  ``job_keys_updated_idx`` serves the retention's batched deletes.
- ``certifications.report``: the load-test report a certification was made
  from (NULL for certifications made before this revision).
"""

from __future__ import annotations

from alembic import op

from queue_runtime.migrations.naming import schema_ident

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE {s}.idempotency_keys
    ADD COLUMN args_digest text,
    ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX idempotency_keys_created_idx ON {s}.idempotency_keys (created_at);

ALTER TABLE {s}.job_keys ADD COLUMN args_digest text;
CREATE INDEX job_keys_updated_idx ON {s}.job_keys (updated_at);

ALTER TABLE {s}.certifications ADD COLUMN report jsonb;
"""

DOWNGRADE = """
ALTER TABLE {s}.certifications DROP COLUMN IF EXISTS report;
DROP INDEX IF EXISTS {s}.job_keys_updated_idx;
ALTER TABLE {s}.job_keys DROP COLUMN IF EXISTS args_digest;
DROP INDEX IF EXISTS {s}.idempotency_keys_created_idx;
ALTER TABLE {s}.idempotency_keys DROP COLUMN IF EXISTS args_digest, DROP COLUMN IF EXISTS created_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE.format(s=schema_ident()))


def downgrade() -> None:
    op.execute(DOWNGRADE.format(s=schema_ident()))
