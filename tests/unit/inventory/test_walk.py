"""Which files a scan reads, and what their modules are called."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from inventory._walk import walk
from inventory.models import ScanErrorKind


def make(root: Path, *paths: str, text: str = "x = 1\n") -> None:
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def found(root: Path, include_tests: bool = False, exclude: tuple[str, ...] = ()) -> list[str]:
    return [f.rel for f in walk(root, include_tests=include_tests, exclude=exclude).files]


def modules(root: Path) -> dict[str, tuple[str, bool]]:
    return {f.rel: (f.module, f.is_package) for f in walk(root).files}


def test_module_names_follow_packages_src_layouts_and_loose_scripts(tmp_path: Path) -> None:
    make(tmp_path, "shop/__init__.py", "shop/views.py", "shop/api/__init__.py", "shop/api/v1.py")
    make(
        tmp_path, "src/billing/__init__.py", "src/billing/charge.py", "manage.py", "scripts/tool.py"
    )
    assert modules(tmp_path) == {
        "manage.py": ("manage", False),
        "scripts/tool.py": ("tool", False),
        "shop/__init__.py": ("shop", True),
        "shop/api/__init__.py": ("shop.api", True),
        "shop/api/v1.py": ("shop.api.v1", False),
        "shop/views.py": ("shop.views", False),
        "src/billing/__init__.py": ("billing", True),
        "src/billing/charge.py": ("billing.charge", False),
    }


def test_scanning_a_package_folder_names_modules_from_above_it(tmp_path: Path) -> None:
    make(tmp_path, "django/__init__.py", "django/db/__init__.py", "django/db/models.py")
    names = {f.rel: f.module for f in walk(tmp_path / "django").files}
    assert names == {
        "__init__.py": "django",
        "db/__init__.py": "django.db",
        "db/models.py": "django.db.models",
    }


def test_tool_environment_and_cache_folders_are_skipped(tmp_path: Path) -> None:
    make(tmp_path, "app.py", "node_modules/x.py", "__pycache__/x.py", "build/x.py", "dist/x.py")
    make(tmp_path, ".tox/x.py", ".nox/x.py", ".migrator/x.py", ".git/x.py", ".venv/lib/x.py")
    make(tmp_path, "lib/site-packages/requests/api.py", "env/lib/x.py", "env/pyvenv.cfg")
    make(tmp_path, "myenv/pyvenv.cfg", "myenv/lib/x.py", "env2/keep.py")
    assert found(tmp_path) == ["app.py", "env2/keep.py"]


def test_test_code_is_skipped_unless_asked_for(tmp_path: Path) -> None:
    make(tmp_path, "app.py", "tests/test_app.py", "test/helpers.py", "pkg/test_x.py")
    make(tmp_path, "pkg/x_test.py", "conftest.py", "pkg/testing.py")
    assert found(tmp_path) == ["app.py", "pkg/testing.py"]
    assert len(found(tmp_path, include_tests=True)) == 7


def test_gitignore_files_apply_relative_to_their_folder(tmp_path: Path) -> None:
    make(tmp_path, "keep.py", "gen/out.py", "pkg/local.py", "pkg/secret.py", "pkg/sub/secret.py")
    make(tmp_path, "other/secret.py", "pkg/important.py")
    (tmp_path / ".gitignore").write_text("gen/\n/pkg/important.py\n", encoding="utf-8")
    (tmp_path / "pkg" / ".gitignore").write_text(
        "secret.py\nlocal.py\n!local.py\n", encoding="utf-8"
    )
    assert found(tmp_path) == ["keep.py", "other/secret.py", "pkg/local.py"]


def test_a_nested_gitignore_can_re_include_what_an_outer_one_ignores(tmp_path: Path) -> None:
    make(tmp_path, "app/generated_x.py", "app/generated_keep.py", "lib/generated_y.py")
    (tmp_path / ".gitignore").write_text("generated_*.py\n", encoding="utf-8")
    (tmp_path / "app" / ".gitignore").write_text("!generated_keep.py\n", encoding="utf-8")
    assert found(tmp_path) == ["app/generated_keep.py"]


def test_gitignore_above_the_root_applies_inside_the_same_git_tree(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    make(tmp_path, "app/views.py", "app/data/dump.py")
    (tmp_path / ".gitignore").write_text("app/data/\n", encoding="utf-8")
    assert found(tmp_path / "app") == ["views.py"]


def test_an_ignored_folder_named_as_the_root_is_still_scanned(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    make(tmp_path, "vendor/lib/mod.py")
    (tmp_path / ".gitignore").write_text("vendor/\n", encoding="utf-8")
    assert found(tmp_path) == []
    assert found(tmp_path / "vendor" / "lib") == ["mod.py"]


def test_exclude_globs_from_configuration(tmp_path: Path) -> None:
    make(tmp_path, "shop/views.py", "shop/migrations/0001_initial.py", "legacy/old.py")
    assert found(tmp_path, exclude=("migrations/", "/legacy")) == ["shop/views.py"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_loop_is_reported_and_the_walk_goes_on(tmp_path: Path) -> None:
    make(tmp_path, "a/inner.py", "z.py")
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    result = walk(tmp_path)
    assert [f.rel for f in result.files] == ["a/inner.py", "z.py"]
    assert [(e.path, e.kind) for e in result.errors] == [("a/loop", ScanErrorKind.SYMLINK_LOOP)]


def test_linked_folder_is_read_once(tmp_path: Path) -> None:
    make(tmp_path, "real/mod.py")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    result = walk(tmp_path)
    assert [f.rel for f in result.files] == ["alias/mod.py"]
    assert result.errors == []


def test_files_carry_size_and_mtime_for_the_cache(tmp_path: Path) -> None:
    make(tmp_path, "app.py", text="print('hi')\n")
    (file,) = walk(tmp_path).files
    stat = (tmp_path / "app.py").stat()
    assert (file.size, file.mtime_ns, file.path) == (
        stat.st_size,
        stat.st_mtime_ns,
        str(tmp_path / "app.py"),
    )
