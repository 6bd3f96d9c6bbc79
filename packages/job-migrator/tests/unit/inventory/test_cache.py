"""The summary cache: reuse by stat, then by content hash; never stale."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

from inventory._scan import _cache, _store
from inventory._scan._files import Summarised, summarise
from inventory._scan._walk import walk
from inventory.models import ScanErrorKind
from inventory.summary import FileSummary


def fake_extract(source: str, path: str, module: str, is_package: bool) -> FileSummary:
    return FileSummary(path=path, module=module, is_package=is_package, lines=source.count("\n"))


def build_cache(root: Path) -> None:
    """Summarise every file under root and save the cache, as a cold scan does."""
    index, fresh = _cache.load_index(root), {}
    for file in walk(root).files:
        outcome = summarise(file, 10_000, fake_extract)
        index.files[file.rel] = _cache.stamp_of(file, outcome)
        if isinstance(outcome, Summarised):
            fresh[file.rel] = (outcome.sha256, outcome.summary_json)
    _store.save(root, fresh, set(fresh), index.tool_key)
    _cache.save_index(root, index)


def stored(root: Path) -> dict[str, FileSummary]:
    index = _cache.load_index(root)
    wanted = {rel: stamp.sha256 for rel, stamp in index.files.items()}
    return _store.load(root, wanted, index.tool_key)


def lookup(root: Path) -> _cache.Lookup:
    return _cache.lookup(_cache.load_index(root), walk(root).files)


def test_unchanged_files_are_hits_and_summaries_survive_a_round_trip(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("y = 2\nz = 3\n", encoding="utf-8")
    build_cache(tmp_path)
    found = lookup(tmp_path)
    assert found.misses == [] and sorted(found.hits) == ["a.py", "b.py"] and not found.refreshed
    assert {rel: s.lines for rel, s in stored(tmp_path).items()} == {"a.py": 1, "b.py": 2}
    assert _store.store_path(tmp_path).name == "summaries-v1.sqlite"


def test_touched_but_identical_file_is_reused_by_hash(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text("x = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    found = lookup(tmp_path)
    assert list(found.hits) == ["a.py"] and found.refreshed
    assert found.hits["a.py"].mtime_ns == stat.st_mtime_ns + 5_000_000_000


def test_changed_content_is_a_miss_even_with_the_same_size(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text("x = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    stat = source.stat()
    source.write_text("x = 2\n", encoding="utf-8")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert [f.rel for f in lookup(tmp_path).misses] == ["a.py"]


def test_a_file_whose_module_name_changed_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    found = lookup(tmp_path)
    assert sorted(f.rel for f in found.misses) == ["pkg/__init__.py", "pkg/mod.py"]


def test_corrupt_or_foreign_cache_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    path = _cache.cache_path(tmp_path, "index")
    path.write_text(path.read_text(encoding="utf-8")[:50], encoding="utf-8")
    assert [f.rel for f in lookup(tmp_path).misses] == ["a.py"]
    build_cache(tmp_path)
    path.write_text(
        path.read_text(encoding="utf-8").replace(_cache.tool_key(), "other-tool"), encoding="utf-8"
    )
    assert [f.rel for f in lookup(tmp_path).misses] == ["a.py"]


def test_failures_are_remembered_in_the_index(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_bytes(b"name = '\xe9'\n")
    build_cache(tmp_path)
    stamp = lookup(tmp_path).hits["bad.py"]
    assert stamp.error is not None and stamp.error.kind == ScanErrorKind.ENCODING


def test_summaries_are_stored_without_defaults(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    with closing(sqlite3.connect(_store.store_path(tmp_path))) as connection:
        (data,) = connection.execute("SELECT summary FROM summaries").fetchone()
    assert b'"star_imports"' not in data and b'"lines":1' in data


def test_a_summary_is_used_only_for_the_content_it_summarises(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    index = _cache.load_index(tmp_path)
    assert _store.load(tmp_path, {"a.py": "another content"}, index.tool_key) == {}
    assert _store.load(tmp_path, {"a.py": index.files["a.py"].sha256}, "another tool") == {}


def test_a_corrupt_store_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    _store.store_path(tmp_path).parent.mkdir(parents=True)
    _store.store_path(tmp_path).write_bytes(b"this is not sqlite" * 100)
    assert stored(tmp_path) == {}
    build_cache(tmp_path)
    assert list(stored(tmp_path)) == ["a.py"]


def test_rows_of_deleted_files_are_dropped(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("y = 1\n", encoding="utf-8")
    build_cache(tmp_path)
    _store.save(tmp_path, {}, {"a.py"}, _cache.tool_key())
    with closing(sqlite3.connect(_store.store_path(tmp_path))) as connection:
        assert connection.execute("SELECT path FROM summaries").fetchall() == [("a.py",)]
