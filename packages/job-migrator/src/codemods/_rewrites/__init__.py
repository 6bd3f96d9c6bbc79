"""One module per rewritten call-site pattern (libcst's ``codemod/commands/`` shape).

Each module's ``rewrite(block, index, target)`` returns an :class:`~codemods._types.Edit`,
a :class:`~codemods._types.Skip` with the reason, or None (not its shape).
Rewrites import only ``enqueue`` (their shared pieces) and the layers below,
never one another; ``codemods._rewriter`` dispatches to them.
"""
