#!/usr/bin/env bash
# Prepare django-tellme 0.7.3 (issue 11: a Django app by others, with its own suite, whose
# mail is migrated end to end).
#
# Usage:  bash packages/job-migrator/tests/e2e/realapps/tellme/setup.sh DEST [django-tellme]
#
# Layout and rules: ../sdist_setup.sh. The suite runs from the source tree (the sdist's
# tellme/tests/testproject is its project), so the app is not installed into the venv.
# Env: PYTHON (default python3; must be 3.11), REALAPP_FRESH=1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="${1:?usage: setup.sh DEST [django-tellme]}"
NAME="${2:-django-tellme}"
[ "$NAME" = "django-tellme" ] || { echo "setup.sh: unknown project '$NAME'" >&2; exit 2; }
NAME="$NAME" SPEC="django-tellme==0.7.3" SDIST="django-tellme-0.7.3.tar.gz" \
  SHA="bebff4b5e2228583ed52baf372299d7d70a9c86da44ce357bb87ccad7f875fc8" \
  TOPDIR="django-tellme-0.7.3" PINS="$HERE/pins/$NAME.txt" INSTALL=none \
  bash "$HERE/../sdist_setup.sh" "$DEST"
