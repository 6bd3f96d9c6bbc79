"""The schema the code expects: tables, columns, indexes, enums.

``EXPECTED`` is what the queries in ``pg/queries.py`` rely on; the migrations
test checks that ``migrate()`` produces exactly this (after procrastinate's
"migrations produce the schema the code expects" test). Reading the actual
schema from the catalog is ``queue_runtime.pg.catalog.inspect_schema``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Table:
    columns: dict[str, tuple[str, bool]]  # name -> (type, not null)
    indexes: dict[str, str]  # name -> definition from pg_get_indexdef, schema stripped
    options: tuple[str, ...] = ()  # reloptions, e.g. ("fillfactor=70",)


@dataclass(frozen=True)
class Schema:
    tables: dict[str, Table] = field(default_factory=dict)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _cols(*spec: str) -> dict[str, tuple[str, bool]]:
    """``"name type"`` (nullable) or ``"name type!"`` (NOT NULL)."""
    out = {}
    for item in spec:
        name, kind = item.split(" ", 1)
        out[name] = (kind.rstrip("!"), kind.endswith("!"))
    return out


EXPECTED = Schema(
    enums={"job_state": ("pending", "running"), "final_status": ("succeeded", "dead", "cancelled")},
    tables={
        "jobs": Table(
            columns=_cols(
                "id bigint!",
                "name text!",
                "pool text!",
                "priority smallint!",
                "state job_state!",
                "attempt integer!",
                "max_attempts integer!",
                "run_at timestamp with time zone!",
                "enqueued_at timestamp with time zone!",
                "claimed_at timestamp with time zone",
                "worker text",
                "tenant text",
                "idempotency_key text",
                "args jsonb!",
                "errors jsonb",
                "unknown_since timestamp with time zone",
            ),
            indexes={
                "jobs_pkey": "UNIQUE btree (id)",
                "jobs_claim_idx": "btree (pool, priority DESC, run_at) WHERE (state = 'pending'::job_state)",
                "jobs_running_idx": "btree (claimed_at) WHERE (state = 'running'::job_state)",
            },
            options=(
                "autovacuum_analyze_scale_factor=0.05",
                "autovacuum_vacuum_scale_factor=0.02",
                "fillfactor=70",
            ),
        ),
        "job_history": Table(
            columns=_cols(
                "id bigint!",
                "name text!",
                "pool text!",
                "status final_status!",
                "priority smallint!",
                "attempt integer!",
                "max_attempts integer!",
                "tenant text",
                "idempotency_key text",
                "enqueued_at timestamp with time zone!",
                "finished_at timestamp with time zone!",
                "args jsonb",
                "result jsonb",
                "error text",
                "traceback text",
                "errors jsonb",
                "started_at timestamp with time zone",
            ),
            indexes={
                "job_history_pkey": "UNIQUE btree (id)",
                "job_history_finished_brin": "brin (finished_at)",
                "job_history_dead_idx": "btree (finished_at) WHERE (status = 'dead'::final_status)",
            },
        ),
        "idempotency_keys": Table(
            columns=_cols(
                "key text!",
                "job_id bigint!",
                "args_digest text",
                "created_at timestamp with time zone!",
            ),
            indexes={
                "idempotency_keys_pkey": "UNIQUE btree (key)",
                "idempotency_keys_created_idx": "btree (created_at)",
            },
        ),
        "job_audit": Table(
            columns=_cols(
                "id bigint!",
                "job_id bigint!",
                "action text!",
                "new_job_id bigint",
                "at timestamp with time zone!",
                "detail jsonb",
            ),
            indexes={"job_audit_pkey": "UNIQUE btree (id)", "job_audit_job_idx": "btree (job_id)"},
        ),
        "certifications": Table(
            columns=_cols(
                "id bigint!",
                "job text!",
                "fingerprint text!",
                "certified_at timestamp with time zone!",
                "certified_by text!",
                "figures jsonb!",
                "revoked_at timestamp with time zone",
                "report jsonb",
            ),
            indexes={
                "certifications_pkey": "UNIQUE btree (id)",
                "certifications_job_idx": "btree (job, fingerprint)",
            },
        ),
        "rollouts": Table(
            columns=_cols(
                "job text!",
                "mode text!",
                "percent smallint!",
                "updated_at timestamp with time zone!",
                "updated_by text",
            ),
            indexes={"rollouts_pkey": "UNIQUE btree (job)"},
        ),
        "job_keys": Table(
            columns=_cols(
                "key text!",
                "job text!",
                "state text!",
                "result jsonb",
                "job_id bigint",
                "updated_at timestamp with time zone!",
                "args_digest text",
            ),
            indexes={
                "job_keys_pkey": "UNIQUE btree (key)",
                "job_keys_updated_idx": "btree (updated_at)",
            },
        ),
        "rollout_changes": Table(
            columns=_cols(
                "id bigint!",
                "job text!",
                "from_mode text",
                "from_percent smallint",
                "to_mode text",
                "to_percent smallint",
                "changed_at timestamp with time zone!",
                "changed_by text",
                "cause text!",
                "reason text",
            ),
            indexes={
                "rollout_changes_pkey": "UNIQUE btree (id)",
                "rollout_changes_job_idx": "btree (job, changed_at DESC)",
            },
        ),
        "cancel_requests": Table(
            columns=_cols(
                "job_id bigint!", "requested_at timestamp with time zone!", "requested_by text"
            ),
            indexes={"cancel_requests_pkey": "UNIQUE btree (job_id)"},
        ),
        "paused_pools": Table(
            columns=_cols("pool text!", "paused_at timestamp with time zone!", "paused_by text"),
            indexes={"paused_pools_pkey": "UNIQUE btree (pool)"},
        ),
        "shadow_evidence": Table(
            columns=_cols(
                "job text!",
                "fingerprint text!",
                "checked bigint!",
                "failed bigint!",
                "unencodable bigint!",
                "examples jsonb!",
                "first_seen timestamp with time zone!",
                "last_seen timestamp with time zone!",
            ),
            indexes={"shadow_evidence_pkey": "UNIQUE btree (job, fingerprint)"},
        ),
        "periodic_switches": Table(
            columns=_cols(
                "id bigint!",
                "job text!",
                "enabled boolean!",
                "changed_at timestamp with time zone!",
                "changed_by text",
                "reason text",
            ),
            indexes={
                "periodic_switches_pkey": "UNIQUE btree (id)",
                "periodic_switches_job_idx": "btree (job, id)",
            },
        ),
        "alembic_version": Table(
            columns=_cols("version_num character varying(32)!"),
            indexes={"alembic_version_pkc": "UNIQUE btree (version_num)"},
        ),
    },
)
