"""The little git the codemods need: dirty files, and commits that never touch the checkout.

Branches are built with plumbing (a private index, ``commit-tree``,
``update-ref``), so creating a review branch leaves the user's working tree,
index and current branch exactly as they were.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from codemods._types import CodemodError


class GitError(CodemodError):
    """A git command failed."""


def _git(
    cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> str:
    return _git_bytes(cwd, *args, stdin=stdin, env=env).decode()


def _git_bytes(
    cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def toplevel(path: Path) -> Path | None:
    """The repository containing ``path``, or None when it is not in one."""
    try:
        return Path(_git(path, "rev-parse", "--show-toplevel").strip())
    except (GitError, OSError):
        return None


def dirty_files(root: Path) -> set[Path]:
    """Absolute paths under ``root`` with uncommitted changes (untracked included)."""
    top = toplevel(root)
    if top is None:
        return set()
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    entries = [e for e in out.split("\0") if e]
    return {(top / e[3:]).resolve() for e in entries if len(e) > 3}


def branch_exists(repo: Path, name: str) -> bool:
    try:
        _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}")
    except GitError:
        return False
    return True


def resolve(repo: Path, ref: str) -> str:
    return _git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()


def commit_files(repo: Path, parent: str, files: dict[Path, str], message: str) -> str:
    """A commit on top of ``parent`` with ``files`` (absolute path -> text) replaced."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "read-tree", parent, env=env)
        for path, text in sorted(files.items()):
            blob = _git(repo, "hash-object", "-w", "--stdin", stdin=text.encode()).strip()
            mode = _mode(repo, parent, path)
            rel = path.relative_to(repo).as_posix()
            _git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{rel}", env=env)
        tree = _git(repo, "write-tree", env=env).strip()
    return _git(repo, "commit-tree", tree, "-p", parent, "-m", message).strip()


def _mode(repo: Path, parent: str, path: Path) -> str:
    line = _git(repo, "ls-tree", parent, "--", path.relative_to(repo).as_posix()).strip()
    return line.split()[0] if line else "100644"


def create_branch(repo: Path, name: str, commit: str) -> None:
    _git(repo, "update-ref", f"refs/heads/{name}", commit, "0" * 40)


@contextmanager
def head_snapshot(top: Path) -> Iterator[Path]:
    """HEAD's tracked files under ``top``, in a temporary directory (the checkout is not read).

    Review branches start from HEAD, so they are planned from HEAD's bytes:
    what ``--write`` left uncommitted in the checkout is planned again, and
    committed, instead of being refused as dirty.
    """
    repo = toplevel(top)
    if repo is None:
        raise GitError(f"{top} is not inside a git repository: --branch needs one")
    prefix = top.resolve().relative_to(repo.resolve()).as_posix()
    tree = "HEAD" if prefix == "." else f"HEAD:{prefix}"
    archive = _git_bytes(repo, "archive", "--format=tar", tree)
    with tempfile.TemporaryDirectory(prefix="migrator-head-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp).resolve()
