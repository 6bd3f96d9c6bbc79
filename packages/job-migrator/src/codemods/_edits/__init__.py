"""Whole-module edits: imports (the one add/remove API), job registration, the status endpoint.

Rewrites never edit a module's imports themselves: they declare what they
need on their :class:`~codemods._types.Edit`, and the pass applies it here.
"""
