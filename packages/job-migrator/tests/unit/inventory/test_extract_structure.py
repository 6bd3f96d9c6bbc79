"""Functions, classes, hashes, and the extractor's contract (pure, raises only SyntaxError)."""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import inspect
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import inventory._extract as extract_package
from inventory import detector_examples
from inventory._extract import extract_source
from inventory.summary import FileSummary

SOURCE = textwrap.dedent(
    """
    import functools
    import httpx
    from concurrent.futures import ThreadPoolExecutor

    class Client(Base):
        pool = ThreadPoolExecutor()

        def __init__(self, token: str):
            self.http = httpx.Client()
            self.token = token

        @functools.cache
        async def fetch(self, url, *args, retries=3, **kwargs): ...

        @staticmethod
        def build(): ...

    def outer(a, /, b):
        def inner(c):
            class Local:
                def method(self): ...
        return inner
    """
)


def summarise(source: str = SOURCE) -> FileSummary:
    return extract_source(source, "pkg/client.py", "pkg.client")


def test_function_qualnames_and_shapes() -> None:
    functions = {f.qualname: f for f in summarise().functions}
    assert list(functions) == [
        "pkg.client.Client.__init__",
        "pkg.client.Client.fetch",
        "pkg.client.Client.build",
        "pkg.client.outer",
        "pkg.client.outer.<locals>.inner",
        "pkg.client.outer.<locals>.inner.<locals>.Local.method",
    ]
    fetch = functions["pkg.client.Client.fetch"]
    assert (fetch.is_async, fetch.is_method, fetch.class_name) == (True, True, "Client")
    assert fetch.params == ["self", "url", "args", "retries", "kwargs"]
    assert fetch.decorators == ["functools.cache"]
    assert fetch.decorator_sources == ["functools.cache"]
    assert functions["pkg.client.outer"].params == ["a", "b"]
    assert functions["pkg.client.outer"].is_method is False


def test_classes() -> None:
    classes = {c.qualname: c for c in summarise().classes}
    client = classes["pkg.client.Client"]
    assert client.bases == ["pkg.client.Base"]
    assert client.methods == ["__init__", "build", "fetch"]
    assert client.attributes == {
        "pool": "concurrent.futures.ThreadPoolExecutor",
        "http": "httpx.Client",
        "token": "pkg.client.str",
    }
    assert "pkg.client.outer.<locals>.inner.<locals>.Local" in classes


def test_source_hash_follows_the_function_text_only() -> None:
    before = {f.qualname: f.source_hash for f in summarise().functions}
    edited = SOURCE.replace("return inner", "return None")
    moved = "\n\n# a comment above\n" + SOURCE
    after_edit = {f.qualname: f.source_hash for f in summarise(edited).functions}
    after_move = {f.qualname: f.source_hash for f in summarise(moved).functions}
    assert len(before["pkg.client.outer"]) == 16
    assert after_edit["pkg.client.outer"] != before["pkg.client.outer"]
    assert after_edit["pkg.client.Client.build"] == before["pkg.client.Client.build"]
    assert after_move == before


def test_spans_and_lines() -> None:
    summary = summarise()
    outer = next(f for f in summary.functions if f.name == "outer")
    assert (outer.span.line, outer.span.end_line) == (19, 23)
    assert summary.lines == SOURCE.count("\n") + 1


def test_same_input_same_output() -> None:
    assert summarise().model_dump() == summarise().model_dump()


def test_syntax_errors_are_raised() -> None:
    with pytest.raises(SyntaxError):
        extract_source("def broken(:\n", "x.py", "x")


@pytest.mark.parametrize(
    "source",
    [
        "",
        "\ufeffx = 1\n",
        "s = 'héllo wörld'; f(s, 'ünïcode')\n",
        "x = 1\r\ny = 2\r\n",
        "match cmd:\n    case [x, *rest]:\n        run(x)\n",
        "async def f():\n    async with a as (b, c):\n        yield [d async for d in e]\n",
        "lambda: (yield)\n",
        "try:\n    pass\nexcept* ValueError:\n    pass\n",
        "class A:\n    x: int\n    def f(self): return self.x.y.z()\n",
        "def f():\n    super().g()\n    (lambda: 1)()\n    [][0]()\n    f()()()\n",
    ],
)
def test_odd_but_valid_python_does_not_raise(source: str) -> None:
    extract_source(source, "x.py", "x")


def test_deeply_nested_expressions() -> None:
    chain = " + ".join(f"f(x{i})" for i in range(3000))
    nested = "g(" * 200 + "1" + ")" * 200
    summary = extract_source(f"def h():\n    y = {chain}\n    z = {nested}\n", "x.py", "x")
    targets = [c.target for c in summary.functions[0].calls]
    assert targets[:2] == ["x.f", "x.f"]
    assert len(targets) == 3200
    assert summary.functions[0].calls[0].arg_sources == ["x0"]


def test_process_settings_are_restored_even_after_a_syntax_error() -> None:
    limit = sys.getrecursionlimit()
    extract_source("x = 1\n", "x.py", "x")
    with pytest.raises(SyntaxError):
        extract_source("def (:\n", "x.py", "x")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: extract_source(SOURCE, "x.py", f"m{i}"), range(8)))
    assert len(results) == 8
    assert gc.isenabled()
    assert sys.getrecursionlimit() == limit


def test_public_api_is_exactly_extract_source() -> None:
    assert extract_package.__all__ == ["extract_source"]
    assert set(detector_examples.__all__) == {"EXAMPLES", "DetectorExample", "examples_for"}


def test_summaries_always_serialise_to_json() -> None:
    source = (
        '__all__ = ["ok", "\\udc80"]\n'
        "def f(c):\n"
        '    c.execute("UPDATE t SET a = \'\\udc80\'", "\\ud800", 1e999, -1e999, b"x")\n'
    )
    summary = extract_source(source, "x.py", "x")
    restored = FileSummary.model_validate_json(summary.model_dump_json())
    assert restored.functions[0].calls[0].args[1] == "\\ud800"
    assert restored.all_names == ["ok", "\\udc80"]


HASHED = """\
def deco(fn):
    return fn


class Box:
    @deco
    def method(self, x):
        return x + 1
"""


def test_source_hash_is_what_a_running_app_can_compute(tmp_path: Path) -> None:
    path = tmp_path / "hashed_module.py"
    path.write_text(HASHED, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("hashed_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = hashlib.sha256(inspect.getsource(module.Box.method).encode()).hexdigest()[:16]
    functions = {f.qualname: f for f in extract_source(HASHED, "x.py", "hashed").functions}
    assert functions["hashed.Box.method"].source_hash == expected
