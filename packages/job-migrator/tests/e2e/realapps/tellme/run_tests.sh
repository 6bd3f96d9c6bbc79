#!/usr/bin/env bash
# Run django-tellme's own suite (its Django TestCases, under pytest-django) as set up by
# setup.sh, and print the counts the way ../shared/realapps/run_tests.sh does:
#     django-tellme: N passed, M failed, K skipped
#     N passed, M failed, K skipped
# preceded by one "[django-tellme] FAILED test-id" line per failing test.
# Usage: bash run_tests.sh DEST [django-tellme]
# Env: REALAPP_TEST_TIMEOUT (seconds, default 600); REALAPP_PYTEST_ARGS (extra pytest
# arguments: the harness's plugins, e.g. "-p django_outbox").
set -uo pipefail
DEST="${1:?usage: run_tests.sh DEST}"
NAME="${2:-django-tellme}"
pdir="$(cd "$DEST" && pwd)/$NAME"
[ -x "$pdir/.venv/bin/python" ] || { echo "run_tests.sh: $pdir is not set up" >&2; exit 2; }
log="$pdir/last-test-run.log"
# shellcheck disable=SC2086  # REALAPP_PYTEST_ARGS is a list of arguments
( cd "$pdir/src" && COLUMNS=400 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$pdir/src" \
    timeout -k 10 "${REALAPP_TEST_TIMEOUT:-600}" \
    "$pdir/.venv/bin/python" -m pytest -q -rfE -p no:cacheprovider \
      --ds tellme.tests.testproject.settings ${REALAPP_PYTEST_ARGS:-} tellme/tests ) >"$log" 2>&1
rc=$?
# shellcheck source=../pytest_counts.sh
. "$(dirname "${BASH_SOURCE[0]}")/../pytest_counts.sh"
report "$NAME" "$log" "$rc"
