# Sourced by the Django apps' run_tests.sh: `report NAME LOG RC` prints a pytest run's
# counts the way ../shared/realapps/run_tests.sh does, one "[NAME] FAILED test-id" line
# per failing test, then "NAME: N passed, M failed, K skipped" and "N passed, M failed,
# K skipped"; it returns 0 only when nothing failed. A run that printed no summary (it
# crashed, or timed out) counts as one failure, as does an exit code pytest never gives
# a finished run (anything but 0 and 1) with no failure counted.
report() {
  local name="$1" log="$2" rc="$3" p f s
  read -r p f s < <(python3 - "$log" "$rc" <<'PYEOF'
import re, sys
text = open(sys.argv[1], errors="replace").read()
lines = [l for l in text.splitlines() if re.search(r" in [\d.]+s", l) and re.search(r"\d+ (passed|failed|error)", l)]
if not lines:
    print(0, 1, 0); sys.exit()
def count(word):
    found = re.search(rf"(\d+) {word}", lines[-1])
    return int(found[1]) if found else 0
failed = count("failed") + count("errors?")
if int(sys.argv[2]) not in (0, 1) and failed == 0:
    failed = 1
print(count("passed"), failed, count("skipped"))
PYEOF
)
  grep -E "^(FAILED|ERROR) " "$log" | sed "s/ - .*//; s/^/[$name] /" | head -n 200
  echo "$name: $p passed, $f failed, $s skipped"
  echo "$p passed, $f failed, $s skipped"
  [ "$f" -eq 0 ]
}
