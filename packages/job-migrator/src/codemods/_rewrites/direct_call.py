"""Direct call whose result is unused: ``fn(a, k=v)`` -> ``fn.enqueue(a, k=v)``.

The callee keeps the name it is written with (an alias, ``module.fn``), so
whatever the application's tests patch still intercepts the call site.
An awaited direct call (``await fn(a)``) becomes a plain ``fn.enqueue(a)``.
"""

from __future__ import annotations

from codemods._rewrites.enqueue import enqueue_statement
from codemods._types import Block, Edit, Skip, Target


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    return enqueue_statement(block, index, target)
