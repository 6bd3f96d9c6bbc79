#!/usr/bin/env bash
# Prepare one pinned sdist of an app by others, with its own test suite (the apps in this folder).
#
# Usage (from an app's setup.sh):  NAME=... SPEC=... SDIST=... SHA=... TOPDIR=... PINS=... \
#                                  INSTALL=editable|none  bash sdist_setup.sh DEST
#
# Same layout and rules as ../shared/realapps/setup.sh (ihatemoney), which this mirrors:
#   DEST/_sdists/<sdist>.tar.gz   the pinned sdist, fetched with `pip download`, sha256-checked
#   DEST/NAME/src/                the unpacked sdist = the tree to scan / migrate / test
#   DEST/NAME/.venv/              Python 3.11 venv: exact pins (PINS), then the app itself
#                                 (`pip install -e src` with INSTALL=editable; INSTALL=none: the
#                                 suite runs from the source tree, as the app's own docs say)
# Idempotent; REALAPP_FRESH=1 unpacks a pristine src/ again (the venv is kept).
# Env: PYTHON (default python3; must be 3.11), REALAPP_FRESH=1.
set -euo pipefail

DEST="${1:?usage: sdist_setup.sh DEST}"
: "${NAME:?}" "${SPEC:?}" "${SDIST:?}" "${SHA:?}" "${TOPDIR:?}" "${PINS:?}"
INSTALL="${INSTALL:-editable}"
PY="${PYTHON:-python3}"
FRESH="${REALAPP_FRESH:-0}"

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
    --no-binary "${SPEC%%==*}" -d "$DEST/_sdists" "$SPEC"
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

want="$(sha256sum < "$PINS" | cut -d' ' -f1) $INSTALL $pdir/src"
[ -x "$pdir/.venv/bin/python" ] || "$PY" -m venv "$pdir/.venv"
if [ "$(cat "$pdir/.venv/.realapp-installed" 2>/dev/null || true)" != "$want" ]; then
  "$pdir/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$PINS"
  if [ "$INSTALL" = "editable" ]; then
    "$pdir/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$pdir/src"
  fi
  "$pdir/.venv/bin/python" -m pip check
  echo "$want" > "$pdir/.venv/.realapp-installed"
fi
echo "setup.sh: done ($NAME) in $DEST"
