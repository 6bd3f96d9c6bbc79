"""Python 3.12 syntax an older ``ast`` refuses, rewritten to what it accepts.

The extractor parses with the running interpreter's ``ast``. Under Python 3.11 a
module using PEP 695 (``def f[T](x)``, ``class Box[T]:``, ``type Alias = ...``)
does not parse, although nothing the analyzer reads depends on type parameters.
``downgrade`` blanks the type-parameter lists out and turns a ``type`` alias into a
plain assignment, token by token, so every line keeps its number and every other
token its column: the summary points at the real source. PEP 701 f-strings (a quote or a
backslash reused inside an f-string's expression) become a plain string literal of
the same lines: the file is read, that f-string's expressions are not. Where tokens cannot
do it (3.11's tokenizer splits an f-string reusing its quotes), ``_lower`` re-spells the
whole file through libcst.
"""

from __future__ import annotations

import ast
import io
import tokenize
from tokenize import TokenInfo

_HEADS = frozenset({"def", "class"})
_STARTS = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT})
_Edit = tuple[tuple[int, int], tuple[int, int], str]  # (row, col) start, end, replacement
# A replaced span: its start and end in the rewritten text, and the length it had in the
# original (character offsets): what maps a rewritten position back to the real source.
Moved = tuple[int, int, int]


def downgrade(source: str) -> str | None:
    """``source`` with PEP 695 syntax rewritten, or None when it has none (or no tokens)."""
    found = rewrite(source)
    return None if found is None else found[0]


def rewrite(source: str) -> tuple[str, list[Moved]] | None:
    """``source`` rewritten, and where: each replaced span as :data:`Moved`, in order."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    edits = [*_type_parameters(tokens), *_aliases(tokens), *_fstrings(tokens)]
    return _apply(source, edits) if edits else None


def _type_parameters(tokens: list[TokenInfo]) -> list[_Edit]:
    """``def f[T](`` / ``class C[T]``: the bracketed list, blanked."""
    edits = []
    for i in range(len(tokens) - 2):
        head, name, bracket = tokens[i], tokens[i + 1], tokens[i + 2]
        if head.string in _HEADS and name.type == tokenize.NAME and bracket.string == "[":
            end = _closing(tokens, i + 2)
            if end is not None:
                edits.append((bracket.start, tokens[end].end, ""))
    return edits


def _aliases(tokens: list[TokenInfo]) -> list[_Edit]:
    """``type X[T] = v`` at the start of a statement: ``X = v`` (``type`` and its
    parameters removed; the soft keyword is never ``type(x)`` or ``type = x`` here)."""
    edits = []
    for i, tok in enumerate(tokens[:-2]):
        starts = i == 0 or tokens[i - 1].type in _STARTS or tokens[i - 1].string == ";"
        name = tokens[i + 1]
        if not (starts and tok.string == "type" and name.type == tokenize.NAME):
            continue
        after = i + 2
        if tokens[after].string == "[":
            closing = _closing(tokens, after)
            if closing is None:
                continue
            edits.append((tokens[after].start, tokens[closing].end, ""))
            after = closing + 1
        if after < len(tokens) and tokens[after].string == "=":
            edits.append((tok.start, name.start, ""))
    return edits


def _fstrings(tokens: list[TokenInfo]) -> list[_Edit]:
    """A PEP 701 f-string (quotes or backslashes inside its braces): a plain string."""
    edits = []
    for tok in tokens:
        prefix = tok.string[: len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))]
        if tok.type != tokenize.STRING or "f" not in prefix.lower():
            continue
        try:
            ast.parse(tok.string, mode="eval")
        except SyntaxError:
            breaks = tok.string.count("\n")
            edits.append((tok.start, tok.end, '"""' + "\n" * breaks + '"""' if breaks else '""'))
    return edits


def _closing(tokens: list[TokenInfo], opening: int) -> int | None:
    depth = 0
    for j in range(opening, len(tokens)):
        text = tokens[j].string
        if tokens[j].type == tokenize.OP and text in "([{":
            depth += 1
        elif tokens[j].type == tokenize.OP and text in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _apply(source: str, edits: list[_Edit]) -> tuple[str, list[Moved]]:
    """Each edit replaces a span; a removed span keeps its line breaks (as continuations),
    so line numbers hold."""
    lines = io.StringIO(source).readlines()  # the rows tokenize counts
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    parts: list[str] = []
    moved: list[Moved] = []
    done = shift = 0
    for (start_row, start_col), (end_row, end_col), new in sorted(edits):
        begin, end = starts[start_row - 1] + start_col, starts[end_row - 1] + end_col
        if begin < done:  # overlaps the edit before: left as it is
            continue
        replacement = new or "\\\n" * (end_row - start_row)
        parts += [source[done:begin], replacement]
        moved.append((begin + shift, begin + shift + len(replacement), end - begin))
        shift += len(replacement) - (end - begin)
        done = end
    parts.append(source[done:])
    return "".join(parts), moved
