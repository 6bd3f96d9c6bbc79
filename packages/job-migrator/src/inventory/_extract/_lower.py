"""Read a file written for Python 3.12 or later when the scan runs on an older Python.

``ast`` parses the grammar of the interpreter that runs it, so under Python 3.11 a file that
uses PEP 701 f-strings (``f"{row["name"]}"``: the f-string's own quotes inside its braces)
or PEP 695 type parameters (``def first[T](xs: list[T]) -> T``, ``class Box[T]:``,
``type Rows = list[Row]``) is a syntax error, and every function of it was lost to the scan
(homeassistant 2025.1 has 31 such files, its signal dispatcher among them). libcst parses
the 3.12 grammar whatever runs it, so such a file is *lowered*: rewritten, in memory only,
into the 3.11 spelling of the same program, and that text is what the extractor reads:

* an f-string whose braces hold its own quote character gets another quote style that none
  of its expressions uses (``f"{row["name"]}"`` -> ``f'{row["name"]}'``), escaping that
  character where its text holds it; innermost f-strings first, so nested ones stay
  distinct; an expression over several lines makes it triple-quoted; a string literal
  holding a backslash or ``#`` inside the braces (``f"{"\\n".join(xs)}"``), which no 3.11
  f-string can hold there, is read as an empty string of its kind;
* type parameters are dropped (``def first(xs: list[T]) -> T``: an annotation the scan
  reads as it reads any other, ``T`` an unknown name), and ``type Rows = list[Row]``
  becomes the assignment ``Rows = list[Row]``, which is what the scan reads of an alias.

Lines never move (a quote swap and a dropped ``[T]`` stay on their line), so every site and
effect keeps the line a user sees in the file. The code is never run. What lowering cannot
spell for 3.11 (a comment inside an f-string's braces, a quote no other style avoids,
syntax newer than 3.12) leaves the file unread, reported as before.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import TypeVar

import libcst as cst

_NEWER = cst.PartialParserConfig(python_version="3.12")
_QUOTES = ("'", '"', "'''", '"""')
_PREFIX = re.compile(r"^[A-Za-z]*")
_EMPTY = cst.Module(body=[])


class _Unlowerable(Exception):
    """An f-string no quote style of 3.11 can spell."""


def lower(text: str) -> str | None:
    """``text`` in the grammar of Python 3.11, lines unchanged; None when it cannot be."""
    try:
        module = cst.parse_module(text, config=_NEWER)
        lowered = module.visit(_Lowering()).code
        ast.parse(lowered)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, RecursionError, _Unlowerable):
        return None
    return lowered if lowered.count("\n") == text.count("\n") else None


class _Lowering(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self._braces = 0  # how deep inside f-string expressions the walk is

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> bool:
        self._braces += 1
        return True

    def leave_FormattedStringExpression(
        self,
        original_node: cst.FormattedStringExpression,
        updated_node: cst.FormattedStringExpression,
    ) -> cst.FormattedStringExpression:
        self._braces -= 1
        return updated_node

    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.SimpleString
    ) -> cst.SimpleString:
        value = updated_node.value
        if not self._braces or not ("\\" in value or "#" in value):
            return updated_node
        # ``f"{"\n".join(lines)}"``: 3.11 allows no backslash (nor ``#``) in the braces;
        # the literal is read as an empty string of its kind (a separator, an escape)
        head = _PREFIX.match(value)
        prefix = head.group(0) if head else ""
        quote = updated_node.quote
        return updated_node.with_changes(value=f"{prefix}{quote}{quote}")

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        return _without_type_parameters(updated_node)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        return _without_type_parameters(updated_node)

    def leave_TypeAlias(
        self, original_node: cst.TypeAlias, updated_node: cst.TypeAlias
    ) -> cst.Assign:
        return cst.Assign(
            targets=[cst.AssignTarget(target=updated_node.name)],
            value=updated_node.value,
            semicolon=updated_node.semicolon,
        )

    def leave_FormattedString(
        self, original_node: cst.FormattedString, updated_node: cst.FormattedString
    ) -> cst.FormattedString:
        prefix = _PREFIX.match(updated_node.start)
        head = prefix.group(0) if prefix else ""
        quote = updated_node.start[len(head) :]
        codes: list[str] = []
        texts: list[str] = []
        _contents(updated_node.parts, codes, texts)
        if any("\\" in code or "#" in code for code in codes):
            raise _Unlowerable  # no 3.11 f-string holds a backslash or a comment in braces
        if _fits(quote, codes):
            return updated_node
        raw = "r" in head.lower()
        for other in _QUOTES:
            if other != quote and _fits(other, codes) and _text_fits(other, quote, texts, raw):
                parts = [_requoted(part, other) for part in updated_node.parts]
                return updated_node.with_changes(parts=parts, start=head + other, end=other)
        raise _Unlowerable


_Generic = TypeVar("_Generic", cst.FunctionDef, cst.ClassDef)


def _without_type_parameters(node: _Generic) -> _Generic:
    """``def first[T](...)`` / ``class Box[T]:`` without its type parameters (PEP 695)."""
    if node.type_parameters is None:
        return node
    return node.with_changes(
        type_parameters=None, whitespace_after_type_parameters=cst.SimpleWhitespace("")
    )


def _contents(
    parts: Sequence[cst.BaseFormattedStringContent],
    codes: list[str],
    texts: list[str],
) -> None:
    for part in parts:
        if isinstance(part, cst.FormattedStringText):
            texts.append(part.value)
        elif isinstance(part, cst.FormattedStringExpression):
            codes.append(_EMPTY.code_for_node(part.expression))
            if part.format_spec:
                _contents(part.format_spec, codes, texts)


def _fits(quote: str, codes: list[str]) -> bool:
    """Python 3.11 ends an f-string's expression at its own closing quote, and a
    single-quoted one at the end of its line."""
    return not any(quote in code or (len(quote) == 1 and "\n" in code) for code in codes)


def _text_fits(quote: str, before: str, texts: list[str], raw: bool) -> bool:
    if len(quote) == 3:
        # a triple quote: the text must not hold its character (nor end the string early)
        return not any(quote[0] in text for text in texts)
    if any("\n" in text for text in texts) and len(before) == 3:
        return False  # a line break a single-quoted string cannot hold
    # a raw string cannot escape the new quote character
    return not (raw and any(quote in text for text in texts))


def _requoted(part: cst.BaseFormattedStringContent, quote: str) -> cst.BaseFormattedStringContent:
    if isinstance(part, cst.FormattedStringText):
        return part.with_changes(value=_escaped(part.value, quote))
    if isinstance(part, cst.FormattedStringExpression) and part.format_spec:
        return part.with_changes(format_spec=[_requoted(p, quote) for p in part.format_spec])
    return part


def _escaped(text: str, quote: str) -> str:
    """``text`` with every unescaped ``quote`` (a single character) escaped."""
    if len(quote) == 3:
        return text
    out: list[str] = []
    backslashes = 0
    for char in text:
        if char == quote and backslashes % 2 == 0:
            out.append("\\")
        out.append(char)
        backslashes = backslashes + 1 if char == "\\" else 0
    return "".join(out)
