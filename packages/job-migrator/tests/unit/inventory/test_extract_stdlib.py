"""Fuzz: the extractor never raises on valid Python (the stdlib's own files), and is fast.

By default every 8th stdlib file is scanned (a few seconds); set
``MIGRATOR_FUZZ_STDLIB=all`` to scan all of them (about 860k lines).
"""

from __future__ import annotations

import ast
import os
import sysconfig
from pathlib import Path

from inventory._extract import extract_source
from inventory.summary import CallInfo

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _stdlib_files() -> list[Path]:
    files = sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts)
    return files if os.environ.get("MIGRATOR_FUZZ_STDLIB") == "all" else files[::8]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None  # a few test files are deliberately mis-encoded


def _calls_outside_lambdas(tree: ast.AST) -> int:
    count, stack = 0, [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda):
            stack += [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]
            continue
        count += isinstance(node, ast.Call)
        stack.extend(ast.iter_child_nodes(node))
    return count


def test_every_call_is_recorded_once() -> None:
    """Each call expression lands in exactly one function's calls (or module_calls);
    calls in lambda bodies are not the enclosing function's. A call through a name bound to
    one of several callables (``a if c else b``, or in the branches of an ``if``) is one
    expression recorded once per callable, at the same place: counted once."""
    for path in _stdlib_files()[::4]:
        source = _read(path)
        if source is None:
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        summary = extract_source(source, "x.py", "m")
        recorded = len({_at(c) for c in summary.module_calls}) + sum(
            len({_at(c) for c in f.calls}) for f in summary.functions
        )
        assert recorded == _calls_outside_lambdas(tree), path


def test_stdlib_never_raises() -> None:
    """Every module of the standard library is summarised, and each summary ships as JSON.

    How fast is a benchmark's question (bench/scan_bench.py, cold and warm, against ruff):
    a CPU-time floor asserted here failed whenever the two cores were shared.
    """
    sources = [s for s in map(_read, _stdlib_files()) if s is not None]
    summaries = []
    for index, source in enumerate(sources):
        try:
            summaries.append(extract_source(source, f"f{index}.py", f"stdlib.m{index}"))
        except SyntaxError:
            continue  # badsyntax_* test data: the orchestrator reports these
    assert len(summaries) >= len(sources) * 0.95
    for summary in summaries:
        summary.model_dump_json()  # what the orchestrator ships between processes


def _at(call: CallInfo) -> tuple[int, int, int | None, int | None]:
    span = call.span
    return span.line, span.column, span.end_line, span.end_column
