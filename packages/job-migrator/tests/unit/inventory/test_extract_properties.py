"""Property tests: random programs assembled from the patterns the extractor knows.

Whatever the nesting, the extractor does not raise, every site points inside the
file and into a function it reports, and every call is recorded exactly once.
"""

from __future__ import annotations

import ast
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from inventory._extract import extract_source
from inventory.summary import FileSummary, TargetKind

HEADER = """\
import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from django.db import transaction
from fastapi import BackgroundTasks
from .jobs import work, Worker
pool = ThreadPoolExecutor()
"""
LEAVES = [
    "threading.Thread(target=work, args=(1,)).start()",
    "t = threading.Thread(target=partial(work, 2))\nt.start()\nt.join()",
    "pool.submit(work, 3)",
    "fut = pool.submit(work, 4)\nfut.result()",
    "list(pool.map(work, [5]))",
    "asyncio.create_task(work(6))",
    "transaction.on_commit(lambda: work(7))",
    "Worker(8).start()",
    "x = [work(i) for i in range(3) if work(i)]",
    "y = work(work(1), key=work(2)) + work(3) * 2",
    "while True:\n    item = q.get()",
    "counter += 1",
    "obj.total += 1",
    "getattr(obj, name)()",
    "'UPDATE orders SET paid = 1'",
    "pass",
]


_HEADERS = {
    "def": "def f{n}(request, bt: BackgroundTasks, obj, name, q):\n",
    "async": "async def a{n}(obj, name, q):\n",
    "with": "with pool:\n",
    "for": "for item in work(0):\n",
    "if": "if work(0):\n",
}


def _wrap(body: str, kind: str, n: int) -> str:
    if kind == "class":
        return f"class C{n}:\n    def m(self, obj, name, q):\n" + textwrap.indent(body, " " * 8)
    return _HEADERS[kind].format(n=n) + textwrap.indent(body, "    ")


programs = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.builds(
        _wrap,
        st.lists(inner, min_size=1, max_size=3).map("\n".join),
        st.sampled_from(["def", "async", "class", "with", "for", "if"]),
        st.integers(0, 99),
    ),
    max_leaves=12,
)


def _check(summary: FileSummary, tree: ast.Module) -> None:
    qualnames = {f.qualname for f in summary.functions}
    for site in summary.sites:
        assert 1 <= site.span.line <= summary.lines
        assert site.enclosing_function is None or site.enclosing_function in qualnames
        assert (site.target is None) == (site.target_kind is TargetKind.DYNAMIC)
    recorded = len(summary.module_calls) + sum(len(f.calls) for f in summary.functions)
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    in_lambdas = sum(isinstance(n, ast.Call) for lam in lambdas for n in ast.walk(lam.body))
    total = sum(isinstance(n, ast.Call) for n in ast.walk(tree))
    assert recorded == total - in_lambdas


@settings(max_examples=150, deadline=None)
@given(st.lists(programs, min_size=1, max_size=4).map("\n".join))
def test_random_programs(body: str) -> None:
    source = HEADER + body + "\n"
    tree = ast.parse(source)
    summary = extract_source(source, "app/views.py", "app.views")
    _check(summary, tree)
