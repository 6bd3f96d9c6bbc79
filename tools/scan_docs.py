"""Generate ``docs/scan.md`` from its template and the examples in the code.

``python -m tools.scan_docs`` rewrites the file; ``python -m tools.scan_docs
--check`` exits 1 when it is stale (the test suite runs the same check). The
pattern and rule sections come from ``inventory.detector_examples`` and
``inventory.rule_examples``, which are also tests, so the docs cannot show
behaviour the scanner does not have. The field tables come from the models.
"""

from __future__ import annotations

import argparse
import re
import sys
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel

import inventory
from inventory import detector_examples, rule_examples
from inventory.config import JobSetting, MigratorConfig
from inventory.models import (
    SCHEMA_VERSION,
    Argument,
    CallSite,
    Effect,
    EffectKind,
    Evidence,
    Idempotency,
    Inventory,
    Job,
    Location,
    ScanError,
    ScanStats,
    UnexplainedCall,
)
from migrator.errors import ExitCode
from tools.scan_docs_render import field_table, render_detectors, render_rules, verdict_rows

REPO = Path(__file__).resolve().parents[1]  # the repository (a dev-only command)
TEMPLATE = REPO / "docs" / "_templates" / "scan.md"
OUTPUT = REPO / "docs" / "scan.md"
SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    Inventory,
    CallSite,
    Argument,
    Job,
    UnexplainedCall,
    Effect,
    Evidence,
    Location,
    ScanError,
    ScanStats,
)


def _catalogue_header() -> str:
    text = (Path(inventory.__file__).resolve().parent / "catalogue.toml").read_text(
        encoding="utf-8"
    )
    header = []
    for line in text.splitlines():
        if not line.startswith("#") or line.startswith("# ---"):
            break
        header.append(line)
    return "\n".join(header)


def _enum_list(enum: type[StrEnum]) -> str:
    return ", ".join(f"`{member.value}`" for member in enum)


def sections() -> dict[str, str]:
    return {
        "detectors": render_detectors(detector_examples.EXAMPLES),
        "rules": render_rules(rule_examples.EXAMPLES),
        "verdicts": verdict_rows(Idempotency),
        "catalogue": _catalogue_header(),
        "effect_kinds": _enum_list(EffectKind),
        "config": "\n\n".join(field_table(m, f"`{n}`") for m, n in _CONFIG_MODELS),
        "schema_version": SCHEMA_VERSION,
        "schema": "\n\n".join(field_table(model, f"`{model.__name__}`") for model in SCHEMA_MODELS),
    }


_CONFIG_MODELS = ((MigratorConfig, "[tool.migrator]"), (JobSetting, '[tool.migrator.jobs."name"]'))


def render() -> str:
    values = sections()
    text = re.sub(
        r"\{\{(\w+)\}\}", lambda match: values[match.group(1)], TEMPLATE.read_text(encoding="utf-8")
    )
    return text.rstrip() + "\n"


def main(argv: list[str] | None = None) -> ExitCode:
    parser = argparse.ArgumentParser(
        prog="python -m tools.scan_docs", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/scan.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        stale = not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text
        print(f"{OUTPUT} is {'stale: run python -m tools.scan_docs' if stale else 'up to date'}")
        return ExitCode.FINDINGS if stale else ExitCode.OK
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
