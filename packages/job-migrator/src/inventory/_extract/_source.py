"""Source text of one file: spans, short segments and function hashes.

``ast.get_source_segment`` re-splits the whole file on every call, which is
quadratic over a file; here the lines are split once and sliced directly.
Columns from ``ast`` are UTF-8 byte offsets, so only non-ASCII lines pay
for an encode.
"""

from __future__ import annotations

import ast
import hashlib
from typing import Protocol

from inventory.summary import Span

TEXT_LIMIT = 200


class Located(Protocol):
    """Any ``ast`` node with a position: ``ast.AST`` itself declares none (contexts have none)."""

    @property
    def lineno(self) -> int: ...
    @property
    def col_offset(self) -> int: ...
    @property
    def end_lineno(self) -> int | None: ...
    @property
    def end_col_offset(self) -> int | None: ...


class SourceText:
    """The lines of one file, split the way the tokenizer counts them."""

    __slots__ = ("lines",)

    def __init__(self, source: str) -> None:
        self.lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def segment(self, node: Located, limit: int = TEXT_LIMIT) -> str:
        """The text of ``node``, cut to ``limit`` characters."""
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start, end = node.col_offset, node.end_col_offset or 0
        if first == last:
            return _cut(self.lines[first], start, end)[:limit]
        parts = [_cut(self.lines[first], start, None)]
        size = len(parts[0])
        for index in range(first + 1, last):
            if size >= limit:
                break
            parts.append(self.lines[index])
            size += len(self.lines[index]) + 1
        if size < limit:
            parts.append(_cut(self.lines[last], 0, end))
        return "\n".join(parts)[:limit]

    def digest(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """sha256 (first 16 hex) of the function's whole lines, decorators included.

        The text is what ``inspect.getsource(fn)`` returns for a file with ``\\n`` line
        ends, so a running app can compute the same hash of its own code."""
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        lines = self.lines[first - 1 : node.end_lineno or node.lineno]
        text = "\n".join(lines) + "\n"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _cut(line: str, start: int, end: int | None) -> str:
    if line.isascii():
        return line[start:end]
    raw = line.encode("utf-8", "surrogatepass")
    return raw[start:end].decode("utf-8", "replace")


def clean(text: str) -> str:
    """A string value from the code, safe to write as UTF-8 JSON: ``"\\udc80"`` escapes
    decode to lone surrogates, which no encoder accepts."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def span_of(node: Located) -> Span:
    return Span(
        line=node.lineno,
        column=node.col_offset,
        end_line=node.end_lineno,
        end_column=node.end_col_offset,
    )
