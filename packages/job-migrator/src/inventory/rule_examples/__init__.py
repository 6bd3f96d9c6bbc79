"""Classification examples: each verdict rule shown on small multi-file sources.

These examples are the documentation of the classifier *and* its tests:
``tests/unit/inventory/test_rule_examples.py`` runs every example through the
real extractor and classifier, ``tools/scan_docs.py`` puts them in docs/scan.md,
and ``python -m inventory.rule_examples`` prints them as Markdown.
"""

from __future__ import annotations

from inventory.rule_examples import (
    config,
    dispatch,
    explained,
    hierarchy,
    leaves,
    money,
    money_evidence,
    repeats,
    resolution,
    safe,
    sinks,
    types,
)
from inventory.rule_examples._base import RuleExample

__all__ = ["EXAMPLES", "RuleExample", "render_markdown"]

EXAMPLES: list[RuleExample] = [
    *money.EXAMPLES,
    *money_evidence.EXAMPLES,
    *sinks.EXAMPLES,
    *repeats.EXAMPLES,
    *safe.EXAMPLES,
    *resolution.EXAMPLES,
    *dispatch.EXAMPLES,
    *hierarchy.EXAMPLES,
    *types.EXAMPLES,
    *explained.EXAMPLES,
    *config.EXAMPLES,
    *leaves.EXAMPLES,
]


def render_markdown() -> str:
    """The examples as a Markdown page: title, why, sources, expected verdict."""
    parts = ["# How `migrator scan` classifies jobs\n"]
    for example in EXAMPLES:
        kinds = ", ".join(sorted(k.value for k in example.expected_effect_kinds)) or "none"
        parts.append(
            f"## {example.title}\n\n{example.why}\n\nJob `{example.job}`: **{example.expected_verdict.value}** (effects: {kinds})\n"
        )
        if example.pyproject:
            parts.append(f"pyproject.toml:\n\n```toml\n{example.pyproject}```\n")
        parts += [
            f"`{path}`:\n\n```python\n{source}```\n"
            for path, source in example.sources().items()
            if source.strip()
        ]
    return "\n".join(parts)
