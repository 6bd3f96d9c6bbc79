"""Which module-level functions (and methods) a later statement of their body binds again."""

from __future__ import annotations

import ast

from inventory._extract.walker._prepass import rebound_after_definition

SOURCE = """\
from typing import TYPE_CHECKING

send = None


def send(to):
    return to


def keep(x):
    return x


send = wrap(send)

if TYPE_CHECKING:
    from fakes import keep

try:
    from fast import parse
except ImportError:
    def parse(text):
        return text

if DEBUG:
    def render(page):
        return page
else:
    def render(page):
        return page.upper()


class Mailer:
    def deliver(self, message):
        return message

    deliver = traced(deliver)

    def plain(self):
        return 1
"""


def test_later_bindings_are_found_and_earlier_or_type_checking_ones_are_not() -> None:
    lines = SOURCE.splitlines()
    found = rebound_after_definition(ast.parse(SOURCE), "app.mail", False)
    # each: the first definition's line, then the later bindings (not the earlier one)
    assert found == {
        "send": [lines.index("def send(to):") + 1, lines.index("send = wrap(send)") + 1],
        "render": [
            lines.index("    def render(page):") + 1,
            len(lines) - lines[::-1].index("    def render(page):"),  # the second one
        ],
        "Mailer.deliver": [
            lines.index("    def deliver(self, message):") + 1,
            lines.index("    deliver = traced(deliver)") + 1,
        ],
    }
