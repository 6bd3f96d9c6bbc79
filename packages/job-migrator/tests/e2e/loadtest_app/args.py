"""Argument generator for ``--args tests.e2e.loadtest_app.args:payments``."""

from __future__ import annotations


def payments(i: int) -> dict[str, int]:
    return {"n": 1000 + i}
