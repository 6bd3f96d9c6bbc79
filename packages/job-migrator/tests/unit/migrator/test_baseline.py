"""Baselines and --fail-on: accepted findings never fail CI, others do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inventory import Idempotency, Inventory
from migrator.errors import BaselineError
from migrator.scan import failing_sites
from migrator.scan.baseline import FORMAT, load_baseline, write_baseline


def test_written_baseline_loads_back_with_every_fingerprint(
    tmp_path: Path, inventory: Inventory
) -> None:
    path = tmp_path / "baseline.json"
    assert write_baseline(path, inventory) == 4
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == FORMAT
    assert load_baseline(path) == {"fp-refund", "fp-mail", "fp-mail-2", "fp-thumb"}


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        (Idempotency.UNSAFE, ["fp-refund"]),
        (Idempotency.NEEDS_KEY, ["fp-refund", "fp-mail", "fp-mail-2"]),
        (Idempotency.UNKNOWN, ["fp-refund", "fp-mail", "fp-mail-2"]),
        (Idempotency.IDEMPOTENT, ["fp-refund", "fp-mail", "fp-mail-2", "fp-thumb"]),
        (None, []),
    ],
)
def test_fail_on_counts_sites_at_or_above_the_threshold(
    inventory: Inventory, threshold: Idempotency | None, expected: list[str]
) -> None:
    assert [s.fingerprint for s in failing_sites(inventory, threshold, frozenset())] == expected


def test_baselined_sites_do_not_fail(inventory: Inventory) -> None:
    failing = failing_sites(inventory, Idempotency.NEEDS_KEY, frozenset({"fp-refund", "fp-mail"}))
    assert [s.fingerprint for s in failing] == ["fp-mail-2"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "is not readable JSON"),
        ('{"fingerprints": []}', "is not a migrator-baseline/v1 document"),
        ('{"format": "migrator-baseline/v1", "fingerprints": [1]}', "must be a list of strings"),
    ],
)
def test_bad_baseline_files_are_refused_with_a_reason(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError, match=message):
        load_baseline(path)


def test_missing_baseline_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="--update-baseline"):
        load_baseline(tmp_path / "nope.json")
