"""codemods: rewrite in-process job call sites to enqueue through queue_runtime.

Only jobs the inventory classifies as safe to move are touched; every other
site is reported with the reason it was left alone.

Layers, top to bottom (each imports only the ones below it; an import-linter
``layers`` contract in the root ``pyproject.toml`` keeps it so):

- ``api``: ``plan_apply``, ``write``, ``create_branches`` (and ``examples``, the
  BEFORE / AFTER cases that are the rewrites' tests and docs);
- ``_changes``: change sets: file changes, review branches, PR texts, git;
- ``_rewriter``: the pass over one file, one typed outcome per target, never raising;
- ``_rewrites``: one module per call-site pattern, sharing only ``enqueue``;
- ``_edits``: whole-module edits: imports (the one add / remove API),
  ``@job`` registration, the status endpoint;
- ``_select``, ``_config``, ``_jobdefs``, ``_stale``: which sites may move;
- ``_syntax``: small libcst helpers; ``_types``: every shared value type.
"""

from codemods._changes.branches import BranchReport, batches
from codemods._types import (
    ApplyOptions,
    ApplyResult,
    ArgumentCrossing,
    CodemodError,
    Crossing,
    FileChange,
    JobBatch,
    SiteOutcome,
    Status,
)
from codemods.api import create_branches, load_inventory, plan_apply, write

__all__ = [
    "ApplyOptions",
    "ApplyResult",
    "ArgumentCrossing",
    "BranchReport",
    "CodemodError",
    "Crossing",
    "FileChange",
    "JobBatch",
    "SiteOutcome",
    "Status",
    "batches",
    "create_branches",
    "load_inventory",
    "plan_apply",
    "write",
]
