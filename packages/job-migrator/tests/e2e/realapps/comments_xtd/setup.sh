#!/usr/bin/env bash
# Prepare django-comments-xtd (issue 11: a second Django app by others, with its own suite).
#
# Usage:  bash packages/job-migrator/tests/e2e/realapps/comments_xtd/setup.sh DEST [django-comments-xtd]
#
# Same layout and rules as ../shared/realapps/setup.sh (ihatemoney), which this mirrors:
#   DEST/_sdists/<sdist>.tar.gz          the pinned sdist, fetched with `pip download`, sha256-checked
#   DEST/django-comments-xtd/src/        the unpacked sdist = the tree to scan / migrate / test
#   DEST/django-comments-xtd/.venv/      Python 3.11 venv: exact pins (pins/django-comments-xtd.txt)
#                                        + `pip install -e src`
# Idempotent; REALAPP_FRESH=1 unpacks a pristine src/ again (the venv is kept).
# Env: PYTHON (default python3; must be 3.11), REALAPP_FRESH=1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="${1:?usage: setup.sh DEST [django-comments-xtd]}"
NAME="${2:-django-comments-xtd}"
PY="${PYTHON:-python3}"
FRESH="${REALAPP_FRESH:-0}"
[ "$NAME" = "django-comments-xtd" ] || { echo "setup.sh: unknown project '$NAME'" >&2; exit 2; }
SPEC="django-comments-xtd==2.9.13"
SDIST="django-comments-xtd-2.9.13.tar.gz"
SHA="0d91e3cc76eae6f30e83b12fb09708e5407664d9daa7b9c1101d7377897f7b42"
TOPDIR="django-comments-xtd-2.9.13"

"$PY" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' \
  || { echo "setup.sh: $PY is not Python 3.11" >&2; exit 2; }
mkdir -p "$DEST/_sdists"
DEST="$(cd "$DEST" && pwd)"
pdir="$DEST/$NAME"
mkdir -p "$pdir"
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

file="$DEST/_sdists/$SDIST"
if [ ! -f "$file" ] || [ "$(sha_of "$file")" != "$SHA" ]; then
  rm -f "$file"
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary django-comments-xtd -d "$DEST/_sdists" "$SPEC"
fi
[ "$(sha_of "$file")" = "$SHA" ] || { echo "setup.sh: sha256 mismatch for $SDIST" >&2; exit 1; }

if [ "$FRESH" = "1" ] || [ ! -d "$pdir/src" ] || [ ! -f "$pdir/.unpacked" ]; then
  rm -rf "$pdir/src" "$pdir/.unpack-tmp" "$pdir/.unpacked"
  mkdir -p "$pdir/.unpack-tmp"
  tar -xzf "$file" -C "$pdir/.unpack-tmp"
  mv "$pdir/.unpack-tmp/$TOPDIR" "$pdir/src"
  rm -rf "$pdir/.unpack-tmp"
  echo "$SDIST $SHA" > "$pdir/.unpacked"
fi

pins="$HERE/pins/$NAME.txt"
want="$(sha256sum < "$pins" | cut -d' ' -f1) $pdir/src"
[ -x "$pdir/.venv/bin/python" ] || "$PY" -m venv "$pdir/.venv"
if [ "$(cat "$pdir/.venv/.realapp-installed" 2>/dev/null || true)" != "$want" ]; then
  "$pdir/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$pins"
  "$pdir/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$pdir/src"
  "$pdir/.venv/bin/python" -m pip check
  echo "$want" > "$pdir/.venv/.realapp-installed"
fi
echo "setup.sh: done ($NAME) in $DEST"
