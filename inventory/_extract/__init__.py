"""The extractor: one file's text in, its :class:`~inventory.summary.FileSummary` out.

A pure function of ``(source, path, module, is_package)``: it never imports or
runs the code it reads, and walks each file once with the stdlib ``ast``
(libcst with metadata is far too slow for whole-project scans).
"""

from __future__ import annotations

import ast
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from inventory._extract._source import SourceText
from inventory._extract._walker import Walker
from inventory.summary import FileSummary

__all__ = ["extract_source"]

_RECURSION_LIMIT = 20_000


def extract_source(source: str, path: str, module: str, is_package: bool = False) -> FileSummary:
    """Summarise one module. Raises ``SyntaxError`` when ``source`` does not parse."""
    source = source.removeprefix("\ufeff")  # a BOM left by a plain utf-8 decode
    with _collector_paused(), _deep_recursion():
        tree = ast.parse(source, filename=path)
        text = SourceText(source)
        summary = FileSummary(
            path=path, module=module, is_package=is_package, lines=len(text.lines)
        )
        Walker(tree, text, summary).run(tree)
    return summary


@contextmanager
def _collector_paused() -> Iterator[None]:
    # A parse allocates hundreds of thousands of acyclic nodes, which makes the cyclic
    # collector run over and over for nothing (about half the time on large files);
    # reference counting frees them all the same.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _deep_recursion() -> Iterator[None]:
    # The walk recurses once or twice per AST level, and valid code nests deeper than the
    # default limit allows (generated expressions). Python-to-Python calls do not use the
    # C stack since 3.11, so a higher limit is safe; it is restored afterwards.
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)
