"""Source text of one file: spans, short segments and function hashes.

``ast.get_source_segment`` re-splits the whole file on every call, which is
quadratic over a file; here the lines are split once and sliced directly.
Columns from ``ast`` are UTF-8 byte offsets, so only non-ASCII lines pay
for an encode.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence
from typing import Protocol

from inventory._extract._grammar import Moved
from inventory.summary import Span

TEXT_LIMIT = 200
# An argument's text is kept whole (``migrator apply`` parses it and matches it against
# the code) up to this size; a longer one is cut and marked, so it never parses.
SOURCE_LIMIT = 5000
TRUNCATED = "\n\u2026"


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
    """The lines of one file, split the way the tokenizer counts them.

    ``lines`` are the text that was parsed. When that is a rewrite of the real source
    (``_grammar``: syntax the running ``ast`` refuses), ``original`` is the real source and
    ``moved`` the rewritten spans, and every segment is cut from the real source."""

    __slots__ = ("_moved", "_original", "_starts", "lines")

    def __init__(
        self, source: str, original: str | None = None, moved: Sequence[Moved] = ()
    ) -> None:
        self.lines = normalised(source).split("\n")
        self._original = normalised(original) if original is not None and moved else None
        self._moved = tuple(moved)
        self._starts: list[int] = []

    def segment(self, node: Located, limit: int = TEXT_LIMIT) -> str:
        """The text of ``node``, cut to ``limit`` characters: for display only (a cut
        text may still parse, as another expression); :meth:`source` for code."""
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start, end = node.col_offset, node.end_col_offset or 0
        if self._original is not None:
            begin = self._back(self._offset(first, start), end=False)
            stop = self._back(self._offset(last, end), end=True)
            return self._original[begin : max(begin, stop)][:limit]
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

    def _offset(self, row: int, column: int) -> int:
        """Character offset in the parsed text of ``ast``'s (row, UTF-8 byte column)."""
        if not self._starts:
            total = 0
            for line in self.lines:
                self._starts.append(total)
                total += len(line) + 1
        return self._starts[row] + len(_cut(self.lines[row], 0, column))

    def _back(self, offset: int, end: bool) -> int:
        """The offset in the real source of ``offset`` in the parsed text. A span replaced
        just before it is behind it; one ending exactly there is inside a node that ``end``s
        there, unless the replacement is empty (a removed span starts after such a node)."""
        shift = 0
        for new_start, new_end, old_size in self._moved:
            if new_end < offset or (new_end == offset and not (end and new_end == new_start)):
                shift += old_size - (new_end - new_start)
            elif new_end > offset:
                break
        return offset + shift

    def source(self, node: Located, limit: int = SOURCE_LIMIT) -> str:
        """The text of ``node`` exactly as written, comments and line breaks inside it
        included; when longer than ``limit`` characters, its first ``limit`` followed by
        :data:`TRUNCATED`. A cut text never parses: the marker is a character no Python
        token holds, after a line break, so it is outside any comment and any string but
        one left unterminated."""
        text = self.segment(node, limit + 1)
        return text if len(text) <= limit else text[:limit] + TRUNCATED

    def digest(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """sha256 (first 16 hex) of the function's whole lines, decorators included.

        The text is what ``inspect.getsource(fn)`` returns for a file with ``\\n`` line
        ends, so a running app can compute the same hash of its own code."""
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        lines = self.lines[first - 1 : node.end_lineno or node.lineno]
        text = "\n".join(lines) + "\n"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def normalised(source: str) -> str:
    """``source`` with the line ends ``ast`` counts (``\\r\\n``, ``\\r``) as ``\\n``."""
    return source.replace("\r\n", "\n").replace("\r", "\n")


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
