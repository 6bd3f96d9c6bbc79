"""Every SQL statement of the PostgreSQL job store, by name.

Tables (see ``migrations/versions``): ``{s}.jobs`` holds queued and running
jobs only; ``{s}.job_history`` finished ones; ``{s}.idempotency_keys`` key ->
job id; ``{s}.job_audit`` operator actions. ``{s}`` is the schema, rendered
with ``sql.Identifier``; every value is a bind parameter.

Fencing: statements that finish, retry, defer or rescue a job match
``(id, attempt)`` AND ``state = 'running'``, so a worker that lost its lease
(the job was rescued and claimed again, attempt + 1) changes nothing.
Attempts only ever grow, so a token is never handed out twice.

Attempt history: ``errors`` (jsonb array, both tables) gets one entry per
failed attempt: ``attempt``, ``error``, ``at`` (when it failed), ``started``
(its claim), ``worker`` and ``traceback`` (clipped by the caller to
``store.TRACEBACK_CHARS``). Only the last ``store.KEPT_ATTEMPTS`` entries are
kept (``_append_attempt``). A history row's ``started_at`` is the claim of the
attempt that finished the job, copied in the same statement (no round trip).
"""

from __future__ import annotations

from queue_runtime.store import KEPT_ATTEMPTS


def _append_attempt(errors: str, entry: str) -> str:
    """SQL: the array ``errors`` with ``entry`` appended, its last KEPT_ATTEMPTS elements kept
    (a lax jsonpath range clips to the array, so a shorter one is kept whole)."""
    return (
        f"jsonb_path_query_array(coalesce({errors}, '[]'::jsonb) || jsonb_build_array({entry}),"
        f" '$[last - {KEPT_ATTEMPTS - 1} to last]')"
    )


def _entry(prefix: str, error: str, traceback: str) -> str:
    """SQL: one failed attempt's entry, from the running row (``prefix``: its alias and a dot)."""
    p = prefix
    return (
        f"jsonb_build_object('attempt', {p}attempt, 'error', {error}, 'at', now(),"
        f" 'started', {p}claimed_at, 'worker', {p}worker, 'traceback', {traceback})"
    )


# enqueue: one job, one round trip. pg_notify is transactional: workers of the
# pool wake up at commit (the caller's commit when enqueued with conn=). A run_at
# in the past is now: a job is queued as of when it became due, so a past run_at
# never puts it ahead of jobs already waiting (``greatest`` skips a NULL: now).
ENQUEUE = """
WITH ins AS (
    INSERT INTO {s}.jobs (name, pool, priority, args, max_attempts, run_at, tenant)
    VALUES (%s, %s, %s, %s, %s, greatest(%s::timestamptz, now()), %s)
    RETURNING id, pool
)
SELECT id, true, pg_notify(%s, pool) FROM ins
"""

# enqueue_keyed: the key row is inserted first (ON CONFLICT DO NOTHING), with
# the digest of the call it names; the job row only when the key was new. A
# known key returns its job, wherever it is now, and the digest it was taken
# with (the store refuses another call's). Zero rows back means a concurrent
# enqueue of the same key committed after our snapshot: the caller runs the
# statement again.
ENQUEUE_KEYED = """
WITH k AS (
    INSERT INTO {s}.idempotency_keys (key, job_id, args_digest)
    VALUES (%(key)s, nextval(%(seq)s::regclass), %(digest)s)
    ON CONFLICT (key) DO NOTHING
    RETURNING job_id
), ins AS (
    INSERT INTO {s}.jobs (id, name, pool, priority, args, max_attempts, run_at, tenant, idempotency_key)
    SELECT k.job_id, %(name)s, %(pool)s, %(priority)s, %(args)s, %(max_attempts)s,
           greatest(%(run_at)s::timestamptz, now()), %(tenant)s, %(key)s
    FROM k
    RETURNING id, pool
)
SELECT id, true, pg_notify(%(channel)s, pool), NULL::text FROM ins
UNION ALL
SELECT job_id, false, NULL, args_digest FROM {s}.idempotency_keys
WHERE key = %(key)s AND NOT EXISTS (SELECT 1 FROM k)
"""

# allocate_ids: ids and the database clock for a COPY batch (COPY returns nothing).
ALLOCATE_IDS = """
SELECT now(), array(SELECT nextval(%s::regclass) FROM generate_series(1, %s))
"""

# allocate_ids_notify: the same, inside the bulk transaction, with one NOTIFY per
# pool of the batch queued for its commit (a batch without idempotency keys
# inserts every row, so the pools are known before the COPY).
ALLOCATE_IDS_NOTIFY = """
SELECT now(), array(SELECT nextval(%s::regclass) FROM generate_series(1, %s)),
       (SELECT count(pg_notify(%s, pool)) FROM unnest(%s::text[]) AS p(pool))
"""

# claim_keys: reserve the idempotency keys of a batch, each with the digest of
# the call it names (as ENQUEUE_KEYED); returns the keys that were new.
CLAIM_KEYS = """
INSERT INTO {s}.idempotency_keys (key, job_id, args_digest)
SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[])
ON CONFLICT (key) DO NOTHING
RETURNING key
"""

# existing_keys: the job ids already holding these keys, and the digest each was taken with.
EXISTING_KEYS = """
SELECT key, job_id, args_digest FROM {s}.idempotency_keys WHERE key = ANY(%s::text[])
"""

# enqueued_key: the job an enqueue took one key for, and the digest it was taken with.
ENQUEUED_KEY = """
SELECT job_id, args_digest FROM {s}.idempotency_keys WHERE key = %s
"""

# copy_jobs: bulk enqueue, binary COPY with ids allocated beforehand.
COPY_JOBS = """
COPY {s}.jobs (id, name, pool, priority, args, max_attempts, run_at, tenant, idempotency_key)
FROM STDIN (FORMAT BINARY)
"""
COPY_TYPES = ["int8", "text", "text", "int2", "jsonb", "int4", "timestamptz", "text", "text"]

# notify_pools: one NOTIFY per pool for a whole batch.
NOTIFY_POOLS = """
SELECT pg_notify(%s, pool) FROM unnest(%s::text[]) AS p(pool)
"""

# claim: the due jobs of one pool, best first, skipping rows other workers
# hold; attempt + 1 makes the new fencing token. The last column is when the
# row became claimable, in epoch seconds (the worker's pickup latency).
CLAIM = """
WITH c AS (
    SELECT id FROM {s}.jobs
    WHERE pool = %s AND state = 'pending' AND run_at <= now()
    ORDER BY priority DESC, run_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
UPDATE {s}.jobs j
SET state = 'running', attempt = j.attempt + 1, claimed_at = now(), worker = %s
FROM c WHERE j.id = c.id
RETURNING j.id, j.name, j.pool, j.args, j.attempt, j.max_attempts, j.tenant,
          j.idempotency_key, j.enqueued_at, j.priority, j.run_at,
          extract(epoch FROM greatest(j.enqueued_at, j.run_at))::float8,
          extract(epoch FROM now() - j.unknown_since)::float8
"""

# complete_many: one statement for a whole batch; the rows leave the hot table
# and a lean history row is written (no copy of the arguments), started_at
# from the attempt's claim.
COMPLETE_MANY = """
WITH done AS (
    SELECT * FROM unnest(%s::bigint[], %s::int[], %s::jsonb[]) AS d(id, attempt, result)
), gone AS (
    DELETE FROM {s}.jobs j USING done
    WHERE j.id = done.id AND j.attempt = done.attempt AND j.state = 'running'
    RETURNING j.id, j.name, j.pool, j.priority, j.attempt, j.max_attempts, j.tenant,
              j.idempotency_key, j.enqueued_at, j.claimed_at, j.errors, done.result
)
INSERT INTO {s}.job_history
    (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
     enqueued_at, started_at, result, errors)
SELECT id, name, pool, 'succeeded', priority, attempt, max_attempts, tenant, idempotency_key,
       enqueued_at, claimed_at, result, errors
FROM gone
"""

# fail_retry: back to pending at run_at, the error and its traceback appended to
# the attempt history (SET reads the row as it was: the attempt's claim and worker).
FAIL_RETRY = f"""
UPDATE {{s}}.jobs
SET state = 'pending', run_at = %s, worker = NULL, claimed_at = NULL,
    errors = {_append_attempt("errors", _entry("", "%s::text", "%s::text"))}
WHERE id = %s AND attempt = %s AND state = 'running'
RETURNING id
"""

# fail_dead: out of the hot table into the dead-letter queue, arguments kept for
# replay; the final traceback goes into its attempt's entry and, as before 0006,
# into the traceback column.
FAIL_DEAD = f"""
WITH gone AS (
    DELETE FROM {{s}}.jobs
    WHERE id = %(id)s AND attempt = %(attempt)s AND state = 'running'
    RETURNING *
)
INSERT INTO {{s}}.job_history
    (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
     enqueued_at, started_at, args, error, traceback, errors)
SELECT id, name, pool, 'dead', priority, attempt, max_attempts, tenant, idempotency_key,
       enqueued_at, claimed_at, args, %(error)s, %(traceback)s,
       {_append_attempt("errors", _entry("", "%(error)s::text", "%(traceback)s::text"))}
FROM gone
RETURNING id
"""

# defer: back to pending later WITHOUT consuming an attempt. The attempt stays
# (tokens never repeat); max_attempts grows by one instead. A job handed back
# because the worker does not know its name keeps the first such moment.
DEFER = """
UPDATE {s}.jobs
SET state = 'pending', run_at = %s, worker = NULL, claimed_at = NULL,
    max_attempts = max_attempts + 1,
    unknown_since = CASE WHEN %s THEN coalesce(unknown_since, now()) ELSE unknown_since END
WHERE id = %s AND attempt = %s AND state = 'running'
RETURNING id
"""

# rescue: jobs whose lease is gone go back to pending now (the attempt is
# consumed: the job may be what killed its worker); on their last attempt they
# go to the dead-letter queue instead, so a poison job cannot loop forever.
RESCUE = f"""
WITH t AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[]) AS t(id, attempt)
), back AS (
    UPDATE {{s}}.jobs j
    SET state = 'pending', run_at = now(), worker = NULL, claimed_at = NULL,
        errors = {_append_attempt("j.errors", _entry("j.", "'lease lost'", "NULL::text"))}
    FROM t
    WHERE j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
      AND j.attempt < j.max_attempts
    RETURNING j.id, j.pool
), gone AS (
    DELETE FROM {{s}}.jobs j USING t
    WHERE j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
      AND j.attempt >= j.max_attempts
    RETURNING j.*
), dead AS (
    INSERT INTO {{s}}.job_history
        (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
         enqueued_at, started_at, args, error, errors)
    SELECT id, name, pool, 'dead', priority, attempt, max_attempts, tenant, idempotency_key,
           enqueued_at, claimed_at, args, 'lease lost on the last attempt',
           {_append_attempt("errors", _entry("", "'lease lost'", "NULL::text"))}
    FROM gone
    RETURNING id
), woken AS (
    SELECT pg_notify(%(channel)s, pool) FROM (SELECT DISTINCT pool FROM back) p
)
SELECT (SELECT count(*) FROM back) + (SELECT count(*) FROM dead), (SELECT count(*) FROM woken)
"""

# running_tokens: claims older than the lease TTL, for the reaper to check in Redis.
RUNNING_TOKENS = """
SELECT id, attempt FROM {s}.jobs
WHERE state = 'running' AND claimed_at < now() - make_interval(secs => %s)
ORDER BY claimed_at
"""

_RECORD_COLUMNS_JOBS = """
    id, name, pool,
    CASE WHEN state = 'running' THEN 'running'
         WHEN errors IS NOT NULL AND attempt > 0 THEN 'retrying' ELSE 'queued' END,
    args, attempt, max_attempts, NULL::jsonb, NULL::text, tenant, idempotency_key,
    enqueued_at, NULL::timestamptz, errors, claimed_at, worker
"""
_RECORD_COLUMNS_HISTORY = """
    id, name, pool, status::text, args, attempt, max_attempts, result, error, tenant,
    idempotency_key, enqueued_at, finished_at, errors, started_at, NULL::text
"""

# get: one job wherever it lives (hot table or history).
GET = f"""
SELECT {_RECORD_COLUMNS_JOBS} FROM {{s}}.jobs WHERE id = %(id)s
UNION ALL
SELECT {_RECORD_COLUMNS_HISTORY} FROM {{s}}.job_history WHERE id = %(id)s
"""

# replayed_as: the job a dead job was replayed into (handles follow replays).
REPLAYED_AS = """
SELECT new_job_id FROM {s}.job_audit
WHERE job_id = %s AND action = 'replay' ORDER BY id DESC LIMIT 1
"""

# dead_letters: the dead-letter queue, newest first.
DEAD_LETTERS = f"""
SELECT {_RECORD_COLUMNS_HISTORY} FROM {{s}}.job_history
WHERE status = 'dead' AND (%(name)s::text IS NULL OR name = %(name)s)
ORDER BY finished_at DESC, id DESC
LIMIT %(limit)s
"""

# replay: dead jobs back into the queue as NEW jobs (fresh id, fresh attempts,
# same arguments and idempotency key), the move recorded in the audit.
REPLAY = """
WITH d AS (
    DELETE FROM {s}.job_history
    WHERE id = ANY(%(ids)s::bigint[]) AND status = 'dead'
    RETURNING id, name, pool, priority, max_attempts, attempt, tenant, idempotency_key, args, errors
), m AS (
    SELECT d.*, nextval(%(seq)s::regclass) AS new_id FROM d
), ins AS (
    INSERT INTO {s}.jobs (id, name, pool, priority, args, max_attempts, tenant, idempotency_key, errors)
    SELECT new_id, name, pool, priority, args, max_attempts, tenant, idempotency_key, errors FROM m
    RETURNING id, pool
), k AS (
    UPDATE {s}.idempotency_keys ik SET job_id = m.new_id FROM m WHERE ik.key = m.idempotency_key
), a AS (
    INSERT INTO {s}.job_audit (job_id, action, new_job_id, detail)
    SELECT id, 'replay', new_id, jsonb_build_object('attempts', attempt) FROM m
), woken AS (
    SELECT pg_notify(%(channel)s, pool) FROM (SELECT DISTINCT pool FROM ins) p
)
SELECT m.id, m.new_id, (SELECT count(*) FROM woken) FROM m
"""

# purge_dead: drop dead letters (all, or these ids) and free their keys.
PURGE_DEAD = """
WITH gone AS (
    DELETE FROM {s}.job_history
    WHERE status = 'dead' AND (%(ids)s::bigint[] IS NULL OR id = ANY(%(ids)s::bigint[]))
    RETURNING id, idempotency_key
), k AS (
    DELETE FROM {s}.idempotency_keys ik USING gone WHERE ik.key = gone.idempotency_key
), a AS (
    INSERT INTO {s}.job_audit (job_id, action) SELECT id, 'purge' FROM gone
)
SELECT count(*) FROM gone
"""

# purge_finished: retention for succeeded and cancelled jobs (never dead ones),
# in bounded batches so a large purge never holds one long transaction.
PURGE_FINISHED = """
WITH gone AS (
    DELETE FROM {s}.job_history
    WHERE id IN (
        SELECT id FROM {s}.job_history
        WHERE status IN ('succeeded', 'cancelled')
          AND finished_at < now() - make_interval(secs => %s)
        LIMIT %s
    )
    RETURNING idempotency_key
), k AS (
    DELETE FROM {s}.idempotency_keys ik USING gone WHERE ik.key = gone.idempotency_key
)
SELECT count(*) FROM gone
"""

# purge_keys: key retention, in bounded batches; a key whose job is still
# queued, running or dead (a replay would bring it back) is kept.
PURGE_KEYS = """
WITH gone AS (
    DELETE FROM {s}.idempotency_keys
    WHERE key IN (
        SELECT ik.key FROM {s}.idempotency_keys ik
        WHERE ik.created_at < now() - make_interval(secs => %s)
          AND NOT EXISTS (SELECT 1 FROM {s}.jobs j WHERE j.id = ik.job_id)
          AND NOT EXISTS (
              SELECT 1 FROM {s}.job_history h WHERE h.id = ik.job_id AND h.status = 'dead')
        LIMIT %s
    )
    RETURNING 1
)
SELECT count(*) FROM gone
"""

# cancel: a job not yet running leaves the queue as cancelled.
CANCEL = """
WITH gone AS (
    DELETE FROM {s}.jobs WHERE id = %s AND state = 'pending' RETURNING *
)
INSERT INTO {s}.job_history
    (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
     enqueued_at, args, errors)
SELECT id, name, pool, 'cancelled', priority, attempt, max_attempts, tenant, idempotency_key,
       enqueued_at, args, errors
FROM gone
RETURNING id
"""

# stats_hot / stats_history: per-pool depth, lag and outcomes for metrics.
STATS_HOT = """
SELECT pool,
       count(*) FILTER (WHERE state = 'pending' AND run_at <= now()),
       count(*) FILTER (WHERE state = 'pending' AND run_at > now()),
       count(*) FILTER (WHERE state = 'running'),
       coalesce(extract(epoch FROM now() - min(run_at) FILTER (
           WHERE state = 'pending' AND run_at <= now())), 0)::float8
FROM {s}.jobs GROUP BY pool
"""
STATS_HISTORY = """
SELECT pool,
       count(*) FILTER (WHERE status = 'dead'),
       count(*) FILTER (WHERE status = 'succeeded' AND finished_at > now() - interval '1 minute')
FROM {s}.job_history
WHERE status = 'dead' OR finished_at > now() - interval '1 minute'
GROUP BY pool
"""

# schema_ready: the tables exist (a clear error beats "relation does not exist").
# CASE evaluates lazily: no lookup errors when the schema or the table is missing.
SCHEMA_READY = """
SELECT CASE WHEN to_regnamespace(%(schema)s) IS NULL THEN NULL
            WHEN to_regclass(%(table)s) IS NULL THEN NULL
            ELSE pg_get_serial_sequence(%(table)s, 'id') END
"""

# cancel_job: one statement for every state. A job not yet running (queued,
# scheduled, retrying) leaves the queue as cancelled; a running one gets a
# cancel request (its worker polls them). The answer: 'cancelled', 'requested',
# 'raced' (claimed while we looked: run it again), 'finished', or NULL
# (unknown: the caller follows a replay). Requests of jobs that have left the queue (finished
# while ignoring theirs) are dropped on the way: the table stays small.
CANCEL_JOB = """
WITH gone AS (
    DELETE FROM {s}.jobs WHERE id = %(id)s AND state = 'pending' RETURNING *
), hist AS (
    INSERT INTO {s}.job_history
        (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
         enqueued_at, args, error, errors)
    SELECT id, name, pool, 'cancelled', priority, attempt, max_attempts, tenant, idempotency_key,
           enqueued_at, args, coalesce('cancelled by ' || %(by)s::text, 'cancelled'), errors
    FROM gone
    RETURNING id
), asked AS (
    INSERT INTO {s}.cancel_requests (job_id, requested_by)
    SELECT id, %(by)s FROM {s}.jobs WHERE id = %(id)s AND state = 'running'
    ON CONFLICT (job_id) DO NOTHING
    RETURNING job_id
), stale AS (
    DELETE FROM {s}.cancel_requests cr
    WHERE NOT EXISTS (SELECT 1 FROM {s}.jobs j WHERE j.id = cr.job_id)
)
SELECT CASE
    WHEN EXISTS (SELECT 1 FROM hist) THEN 'cancelled'
    WHEN EXISTS (SELECT 1 FROM asked)
      OR EXISTS (SELECT 1 FROM {s}.jobs WHERE id = %(id)s AND state = 'running') THEN 'requested'
    WHEN EXISTS (SELECT 1 FROM {s}.jobs WHERE id = %(id)s) THEN 'raced'
    WHEN EXISTS (SELECT 1 FROM {s}.job_history WHERE id = %(id)s) THEN 'finished'
END
"""

# cancel_attempt: a running attempt that stopped on its cancel request leaves
# the queue as cancelled (fenced like fail_dead); its request is consumed.
CANCEL_ATTEMPT = """
WITH gone AS (
    DELETE FROM {s}.jobs
    WHERE id = %(id)s AND attempt = %(attempt)s AND state = 'running'
    RETURNING *
), req AS (
    DELETE FROM {s}.cancel_requests WHERE job_id IN (SELECT id FROM gone)
)
INSERT INTO {s}.job_history
    (id, name, pool, status, priority, attempt, max_attempts, tenant, idempotency_key,
     enqueued_at, started_at, args, error, errors)
SELECT id, name, pool, 'cancelled', priority, attempt, max_attempts, tenant, idempotency_key,
       enqueued_at, claimed_at, args, %(reason)s, errors
FROM gone
RETURNING id
"""

# pause / resume: a row per paused pool; the answer says whether it changed.
PAUSE = """
INSERT INTO {s}.paused_pools (pool, paused_by) VALUES (%s, %s)
ON CONFLICT (pool) DO NOTHING
RETURNING pool
"""
RESUME = """
DELETE FROM {s}.paused_pools WHERE pool = %s RETURNING pool
"""

# control: what every worker polls (about twice a second): the paused pools and
# which of the jobs it holds have a cancel request. Both tables stay tiny.
CONTROL = """
SELECT (SELECT coalesce(array_agg(pool), '{{}}') FROM {s}.paused_pools),
       (SELECT coalesce(array_agg(job_id), '{{}}') FROM {s}.cancel_requests
        WHERE job_id = ANY(%s::bigint[]))
"""

# periodic switches (the dashboard's enable / disable): a job's newest row is its
# state; the ticker reads the disabled ones each round (the table stays tiny).
SWITCH_PERIODIC = """
INSERT INTO {s}.periodic_switches (job, enabled, changed_by, reason)
SELECT %(job)s, %(enabled)s, %(by)s, %(reason)s
WHERE coalesce((SELECT enabled FROM {s}.periodic_switches WHERE job = %(job)s
                ORDER BY id DESC LIMIT 1), true) <> %(enabled)s
RETURNING id
"""
DISABLED_PERIODIC = """
SELECT job FROM (
    SELECT DISTINCT ON (job) job, enabled FROM {s}.periodic_switches ORDER BY job, id DESC
) newest WHERE NOT enabled
"""

# paused_pools: for status.
PAUSED_POOLS = """
SELECT pool FROM {s}.paused_pools ORDER BY pool
"""
