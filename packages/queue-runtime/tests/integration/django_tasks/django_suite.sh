#!/usr/bin/env bash
# Django's own tests/tasks suite (from the Django source release) against queue_runtime's backend.
#
# Usage: django_suite.sh PYTHON   (a venv's python with Django 6.x and queue-runtime installed)
# Needs PostgreSQL and Redis (QUEUE_RUNTIME_TEST_DATABASE_URL / QUEUE_RUNTIME_TEST_REDIS_URL).
#
# What is adapted is settings only: each test class's TASKS names this backend where it named
# the DummyBackend (test_tasks.py, test_dummy_backend.py), through a subclass that adds the
# DummyBackend's clear(), which the suite's setUp calls to empty the queue. The assertions are
# Django's. The tests listed in EXPECTED fail by design: they assert the DummyBackend itself
# (isinstance DummyBackend, its in-memory .results list). test_immediate_backend.py asserts
# that a task ran at enqueue and test_custom_backend.py tests backends the suite defines: not
# run. Exit 0 when exactly the expected tests fail.
set -euo pipefail
PYTHON="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"  # not realpath: a venv's python is a symlink
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
VERSION="$("$PYTHON" -c 'import django; print(django.__version__)')"
"$PYTHON" -m pip download --quiet --no-binary :all: --no-deps "Django==$VERSION" -d "$WORK" 2>&1 \
  | grep -v WARNING || true
tar xzf "$WORK"/[dD]jango-"$VERSION".tar.gz -C "$WORK"
cd "$WORK/django-$VERSION/tests"
sed -i 's/"django.tasks.backends.dummy.DummyBackend"/"djsuite_backend.SuiteBackend"/' \
  tasks/test_tasks.py tasks/test_dummy_backend.py
cat > djsuite_backend.py <<'PY'
import psycopg

from queue_runtime.django import TaskBackend
from queue_runtime.runtime import current


class SuiteBackend(TaskBackend):
    def clear(self):
        s = current().settings
        with psycopg.connect(s.database_url, autocommit=True) as conn:
            conn.execute(f"TRUNCATE {s.schema_name}.jobs, {s.schema_name}.job_history")
PY
DB="${QUEUE_RUNTIME_TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}"
REDIS="${QUEUE_RUNTIME_TEST_REDIS_URL:-redis://127.0.0.1:6379/0}"
SCHEMA="qr_django_suite_$$"
cat > pyproject.toml <<TOML
[tool.queue_runtime]
database_url = "$DB"
redis_url = "$REDIS"
schema_name = "$SCHEMA"
redis_prefix = "$SCHEMA"
default_pool = "default"

[tool.queue_runtime.pools.default]
[tool.queue_runtime.pools.queue_1]
TOML
"$PYTHON" -c "from queue_runtime import migrate; from queue_runtime._settings_load import load_settings; migrate(load_settings())"
drop() { "$PYTHON" -c "import psycopg; psycopg.connect('$DB', autocommit=True).execute('DROP SCHEMA IF EXISTS $SCHEMA CASCADE')"; }
trap 'drop; rm -rf "$WORK"' EXIT
set +e
"$PYTHON" runtests.py tasks.test_tasks tasks.test_dummy_backend --settings=test_sqlite --parallel=1 -v 2 \
  > "$WORK/out.txt" 2>&1
set -e
{ grep -E '^(ERROR|FAIL): ' "$WORK/out.txt" || true; } | sed -E 's/^(ERROR|FAIL): (test_\w+) \(([^)]*)\).*/\3/' \
  | sed -E 's/^tasks\.//' | sort -u > "$WORK/failed.txt"
ran="$(grep -E '^Ran [0-9]+ tests' "$WORK/out.txt")"
sort "$HERE/django_suite_expected.txt" > "$WORK/expected.txt"
echo "Django $VERSION tests/tasks against queue_runtime.django.TaskBackend: $ran"
echo "failing as expected (they assert the DummyBackend): $(wc -l < "$WORK/failed.txt")"
if ! diff -u "$WORK/expected.txt" "$WORK/failed.txt"; then
  echo "unexpected results (above: - expected failure that passed, + unexpected failure)" >&2
  tail -80 "$WORK/out.txt" >&2
  exit 1
fi
names="$(grep -oE '^test_\w+ \(tasks\.[^)]*\)' "$WORK/out.txt" | sort -u | wc -l)"
failed="$(wc -l < "$WORK/failed.txt")"
echo "$((names - failed)) passed, $failed failed: the tests that assert the DummyBackend itself"
