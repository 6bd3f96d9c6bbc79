#!/usr/bin/env bash
# Run django-comments-xtd's own suite (pytest + pytest-django, as its tox.ini does) as set up
# by setup.sh, and print the counts the way ../shared/realapps/run_tests.sh does:
#     django-comments-xtd: N passed, M failed, K skipped
#     N passed, M failed, K skipped
# preceded by one "[django-comments-xtd] FAILED test-id" line per failing test.
# Usage: bash run_tests.sh DEST [django-comments-xtd]
# Env: REALAPP_TEST_TIMEOUT (seconds, default 600).
set -uo pipefail
DEST="${1:?usage: run_tests.sh DEST}"
NAME="${2:-django-comments-xtd}"
pdir="$(cd "$DEST" && pwd)/$NAME"
[ -x "$pdir/.venv/bin/python" ] || { echo "run_tests.sh: $pdir is not set up" >&2; exit 2; }
log="$pdir/last-test-run.log"
# tox.ini: changedir = django_comments_xtd, PYTHONPATH = the sdist's root, the tests' settings.
( cd "$pdir/src/django_comments_xtd" && COLUMNS=400 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$pdir/src" \
    DJANGO_SETTINGS_MODULE=django_comments_xtd.tests.settings \
    timeout -k 10 "${REALAPP_TEST_TIMEOUT:-600}" \
    "$pdir/.venv/bin/python" -m pytest -q -rfE -p no:cacheprovider ) >"$log" 2>&1
rc=$?
# shellcheck source=../pytest_counts.sh
. "$(dirname "${BASH_SOURCE[0]}")/../pytest_counts.sh"
report "$NAME" "$log" "$rc"
