"""Each argument's recorded source is exactly its text in the file, whatever its shape.

``migrator apply`` parses ``Argument.source`` and matches it against the code, so a cut
or shifted text makes it refuse the site ("the argument does not parse") or, worse, read
another expression. These build small modules with one job site and compare each
argument's source with the text written between its delimiters.
"""

from __future__ import annotations

import ast
import sys

import pytest

from inventory._extract import extract_source
from inventory._extract._source import SOURCE_LIMIT, TRUNCATED
from inventory.models import Argument

HEAD = "import threading\n\ndef job(*args, **kwargs): ...\n\n"


def site_arguments(source: str) -> list[Argument]:
    summary = extract_source(source, "app/views.py", "app.views")
    (site,) = summary.sites
    return site.arguments


def call_sources(source: str) -> dict[str, list[str]]:
    """Every call's positional argument sources, by target (what direct call sites use)."""
    summary = extract_source(source, "app/views.py", "app.views")
    calls = [*summary.module_calls, *(c for f in summary.functions for c in f.calls)]
    return {c.target: c.arg_sources for c in calls}


def assert_exact(argument: Argument, expected: str) -> None:
    assert argument.source == expected
    ast.parse(f"({argument.source})", mode="eval")  # what ``migrator apply`` does


# The argument of ``render(...)`` spans lines, holds comments, and is longer than the
# 200 characters a display text is cut to.
MULTILINE_ARG = """render(
        "subject_change.txt"  # the new address
        if new_email
        else "subject_login.txt",
        {"current_site": current_site, "token": token, "more": more_context},
        # a comment line of its own, with a ) and a ' inside
        request=request,
    ).strip()"""


def test_a_multi_line_argument_with_comments_is_recorded_whole() -> None:
    source = f"""{HEAD}def view(request, new_email, current_site, token, more_context):
    threading.Thread(
        target=job,
        args=(
            {MULTILINE_ARG},
            new_email,
        ),
    ).start()
"""
    assert len(MULTILINE_ARG) > 200
    first, second = site_arguments(source)
    assert_exact(first, MULTILINE_ARG)
    assert_exact(second, "new_email")


def test_non_ascii_text_before_the_argument_on_its_line_and_in_the_file() -> None:
    source = f"""# café, naïve, 日本語: the file is not ASCII
{HEAD}def view(élan, user_id):
    threading.Thread(target=job, args=("ünïcödé", élan, {{"k": "€"}}, user_id)).start()
"""
    found = site_arguments(source)
    for argument, expected in zip(
        found, ['"ünïcödé"', "élan", '{"k": "€"}', "user_id"], strict=True
    ):
        assert_exact(argument, expected)


def test_non_ascii_text_on_the_first_and_last_line_of_a_multi_line_argument() -> None:
    arg = 'dict(\n        café="é",  # ½\n        id=user_id,\n    )'
    source = f"""{HEAD}def view(user_id):
    threading.Thread(target=job, args=("→", {arg})).start()
"""
    found = site_arguments(source)
    assert_exact(found[0], '"→"')
    assert_exact(found[1], arg)


def test_tabs_as_indentation_and_inside_the_argument() -> None:
    arg = "[\n\t\tuser_id\t+\t1,\t# \tnote\n\t]"
    source = f"{HEAD}def view(user_id):\n\tthreading.Thread(target=job, args=({arg},)).start()\n"
    (found,) = site_arguments(source)
    assert_exact(found, arg)


def test_windows_line_ends_are_counted_like_the_parser_counts_them() -> None:
    source = f"{HEAD}def view(user_id):\n    threading.Thread(target=job, args=([\n        user_id,\n    ],)).start()\n"
    (found,) = site_arguments(source.replace("\n", "\r\n"))
    assert_exact(found, "[\n        user_id,\n    ]")


def test_keyword_arguments_are_recorded_whole() -> None:
    source = f"""{HEAD}def view(request, new_email, current_site, token, more_context):
    threading.Thread(target=job, kwargs={{"body": {MULTILINE_ARG}}}).start()
    threading.Thread(target=job, args=(1,), name=(
        "worker"  # named
    )).start()
"""
    summary = extract_source(source, "app/views.py", "app.views")
    sources = [a.source for s in summary.sites for a in s.arguments]
    assert MULTILINE_ARG in sources


def test_call_argument_sources_are_whole_too() -> None:
    # A direct call site's arguments come from the call's own record.
    source = f"""def view(request, new_email, current_site, token, more_context):
    send_mail({MULTILINE_ARG}, "from@example.com")
"""
    found = call_sources(source)["app.views.send_mail"]
    assert found == [MULTILINE_ARG, '"from@example.com"']


def test_a_huge_argument_is_cut_and_marked_so_that_it_never_parses() -> None:
    items = ", ".join(f"user_{i}_id" for i in range(SOURCE_LIMIT // 8))
    source = f"{HEAD}def view():\n    threading.Thread(target=job, args=([{items}],)).start()\n"
    (found,) = site_arguments(source)
    assert len(found.source) == SOURCE_LIMIT + len(TRUNCATED)
    assert found.source.endswith(TRUNCATED)
    assert found.source.startswith("[user_0_id, user_1_id")
    with pytest.raises(SyntaxError):
        ast.parse(f"({found.source})", mode="eval")


@pytest.mark.parametrize(
    "cut",
    [
        "x  # a comment",
        '"an unterminated string',
        '"""a triple quoted',
        "x + \\",
        "'escaped \\",
        "f(a,",
    ],
)
def test_the_truncation_marker_never_parses(cut: str) -> None:
    for text in (cut + TRUNCATED, f"({cut}{TRUNCATED})"):
        with pytest.raises(SyntaxError):
            ast.parse(text)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="parsed without a rewrite")
def test_arguments_after_and_inside_rewritten_syntax_are_cut_from_the_real_source() -> None:
    # Python 3.11 refuses PEP 695 / PEP 701: the file is parsed rewritten (type parameters
    # and the f-string blanked out), and the argument texts still come from the file.
    fstring = "f\"{'\\n'.join(names)} <{email}>\""
    source = f"""import threading

def job[T](*args: T) -> None: ...

def view[T](names: dict[str, T], email, user_id):
    threading.Thread(target=job, args=({fstring}, [
        user_id,  # ½
    ], email)).start()
"""
    found = site_arguments(source)
    assert [a.source for a in found] == [fstring, "[\n        user_id,  # ½\n    ]", "email"]
