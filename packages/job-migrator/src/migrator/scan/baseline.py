"""Baselines: the findings a team has accepted, by site fingerprint.

A baseline file is JSON::

    {"format": "migrator-baseline/v1", "fingerprints": ["3f2a...", ...]}

Findings whose fingerprint is listed are still reported (marked as baseline)
but never fail ``--fail-on``. Fingerprints do not contain line numbers, so
edits elsewhere in a file keep a finding in the baseline.
"""

from __future__ import annotations

import json
from pathlib import Path

from inventory import Inventory
from migrator.errors import BaselineError

FORMAT = "migrator-baseline/v1"


def load_baseline(path: Path) -> frozenset[str]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BaselineError(
            f"baseline file {path} does not exist (create it with --update-baseline)"
        ) from exc
    except (OSError, ValueError) as exc:
        raise BaselineError(f"baseline file {path} is not readable JSON: {exc}") from exc
    return _fingerprints(path, document)


def _fingerprints(path: Path, document: object) -> frozenset[str]:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BaselineError(f"baseline file {path} is not a {FORMAT} document")
    listed = document.get("fingerprints")
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise BaselineError(f"baseline file {path}: 'fingerprints' must be a list of strings")
    return frozenset(listed)


def write_baseline(path: Path, inventory: Inventory) -> int:
    """Write every current site's fingerprint to ``path``; returns how many."""
    fingerprints = sorted({site.fingerprint for site in inventory.sites if site.fingerprint})
    document = {"format": FORMAT, "fingerprints": fingerprints}
    try:
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"cannot write baseline file {path}: {exc}") from exc
    return len(fingerprints)
