#!/usr/bin/env bash
# Run django-registration's own suite (its runtests.py, Django's test runner) as set up by
# setup.sh, and print the counts the way ../shared/realapps/run_tests.sh does:
#     django-registration: N passed, M failed, K skipped
#     N passed, M failed, K skipped
# Usage: bash realapps/run_tests.sh DEST [django-registration]
# Env: REALAPP_TEST_TIMEOUT (seconds, default 600).
set -uo pipefail
DEST="${1:?usage: run_tests.sh DEST}"
NAME="${2:-django-registration}"
pdir="$(cd "$DEST" && pwd)/$NAME"
[ -x "$pdir/.venv/bin/python" ] || { echo "run_tests.sh: $pdir is not set up" >&2; exit 2; }
log="$pdir/last-test-run.log"
( cd "$pdir/src" && PYTHONDONTWRITEBYTECODE=1 timeout -k 10 "${REALAPP_TEST_TIMEOUT:-600}" \
    "$pdir/.venv/bin/python" runtests.py ) >"$log" 2>&1
rc=$?
read -r p f s < <(python3 - "$log" "$rc" <<'PYEOF'
import re, sys
text = open(sys.argv[1], errors="replace").read()
ran = re.findall(r"^Ran (\d+) tests?", text, re.M)
if not ran:
    print(0, 1, 0); sys.exit()
total = int(ran[-1])
def count(word):
    found = re.findall(rf"{word}=(\d+)", text.split("Ran ")[-1])
    return int(found[-1]) if found else 0
failed = count("failures") + count("errors")
skipped = count("skipped")
if int(sys.argv[2]) != 0 and failed == 0:
    failed = 1
print(total - failed - skipped, failed, skipped)
PYEOF
)
grep -E "^(FAIL|ERROR):" "$log" | sed "s/^/[$NAME] /" | head -n 200
echo "$NAME: $p passed, $f failed, $s skipped"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
