"""Findings a project chose not to see: ``# migrator: ignore[...]`` and ``per-file-ignores``.

Ruff's ``noqa`` habit: a comment on a line of the site (``# migrator: ignore``
for every pattern, ``# migrator: ignore[thread, on_commit]`` for some) or a
``[tool.migrator] per-file-ignores`` glob takes the site out of the report and
out of ``--fail-on``. Only the files that have sites are read again, so a warm
scan pays for a handful of reads, not for the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from inventory import CallSite, Inventory
from inventory.config import IGNORE_ALL, MigratorConfig

_COMMENT = re.compile(r"#\s*migrator:\s*ignore(?:\[([^\]]*)\])?", re.IGNORECASE)


@dataclass
class Suppressions:
    """What ``[tool.migrator] per-file-ignores`` and the files' comments take out."""

    root: Path
    globs: list[tuple[pathspec.GitIgnoreSpec, frozenset[str]]] = field(default_factory=list)
    _lines: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, root: Path, config: MigratorConfig) -> Suppressions:
        globs = [
            (pathspec.GitIgnoreSpec.from_lines([glob]), frozenset(codes))
            for glob, codes in config.per_file_ignores.items()
        ]
        return cls(root, globs)

    def hides(self, site: CallSite) -> bool:
        pattern, path = site.pattern.value, site.location.path
        for spec, codes in self.globs:
            if (pattern in codes or IGNORE_ALL in codes) and spec.match_file(path):
                return True
        last = site.location.end_line or site.location.line
        lines = self._source(path)[site.location.line - 1 : last]
        return any(_comment_hides(line, pattern) for line in lines)

    def _source(self, path: str) -> list[str]:
        found = self._lines.get(path)
        if found is None:
            try:
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""  # gone since the scan: nothing to read a comment from
            found = self._lines[path] = text.splitlines()
        return found


def _comment_hides(line: str, pattern: str) -> bool:
    found = _COMMENT.search(line)
    if found is None:
        return False
    if found.group(1) is None:
        return True  # a bare ``# migrator: ignore``
    codes = {code.strip().lower() for code in found.group(1).split(",")}
    return pattern in codes or IGNORE_ALL in codes


def without_suppressed(inventory: Inventory, suppressions: Suppressions) -> int:
    """Drop the suppressed sites (and the jobs only they ran) in place; returns how many."""
    kept = [site for site in inventory.sites if not suppressions.hides(site)]
    dropped = len(inventory.sites) - len(kept)
    if dropped:
        jobs = {site.job for site in kept}
        inventory.sites = kept
        inventory.jobs = [job for job in inventory.jobs if job.qualname in jobs]
    return dropped
