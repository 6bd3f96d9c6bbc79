#!/usr/bin/env bash
# Prepare django-comments-xtd (issue 11: a second Django app by others, with its own suite).
#
# Usage:  bash packages/job-migrator/tests/e2e/realapps/comments_xtd/setup.sh DEST [django-comments-xtd]
#
# Layout and rules: ../sdist_setup.sh. Env: PYTHON (default python3; must be 3.11), REALAPP_FRESH=1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="${1:?usage: setup.sh DEST [django-comments-xtd]}"
NAME="${2:-django-comments-xtd}"
[ "$NAME" = "django-comments-xtd" ] || { echo "setup.sh: unknown project '$NAME'" >&2; exit 2; }
NAME="$NAME" SPEC="django-comments-xtd==2.9.13" SDIST="django-comments-xtd-2.9.13.tar.gz" \
  SHA="0d91e3cc76eae6f30e83b12fb09708e5407664d9daa7b9c1101d7377897f7b42" \
  TOPDIR="django-comments-xtd-2.9.13" PINS="$HERE/pins/$NAME.txt" INSTALL=editable \
  bash "$HERE/../sdist_setup.sh" "$DEST"
