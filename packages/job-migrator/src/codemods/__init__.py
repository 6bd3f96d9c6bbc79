"""codemods: rewrite in-process job call sites to enqueue through queue_runtime.

Only jobs the inventory classifies as safe to move are touched; every other
site is reported with the reason it was left alone.
"""

from codemods._branches import BranchReport, batches
from codemods._types import (
    ApplyOptions,
    ApplyResult,
    CodemodError,
    FileChange,
    JobBatch,
    SiteOutcome,
    Status,
)
from codemods.api import create_branches, load_inventory, plan_apply, write

__all__ = [
    "ApplyOptions",
    "ApplyResult",
    "BranchReport",
    "CodemodError",
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
