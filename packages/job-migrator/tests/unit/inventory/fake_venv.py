"""A real virtualenv on disk without pip, for tests of how the scan reads installed libraries;
and a project tree written and scanned."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from inventory import Idempotency, scan
from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import Job


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def scanned_job(root: Path, files: dict[str, str], job: str) -> tuple[Idempotency, list[str]]:
    """Write ``files`` under ``root``, scan it (no cache, one process) and return ``job``'s
    verdict and the calls it could not explain."""
    write_tree(root, files)
    found = scan(root, use_cache=False, write=False, jobs=1).job(job)
    assert found is not None, f"no job {job}"
    return found.idempotency, [u.call for u in found.unexplained]


def fake_venv(where: Path, library: dict[str, str]) -> Path:
    """pyvenv.cfg, a python link and site-packages holding ``library``; returns its python."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    write_tree(where / "lib" / version / "site-packages", library)
    (where / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n", encoding="utf-8")
    (where / "bin").mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.realpath(sys.executable), where / "bin" / "python")
    return where / "bin" / "python"


def classified_jobs(files: dict[str, str]) -> dict[str, Job]:
    """``files`` (path -> source) extracted and classified in memory, no library read: each
    job by its qualname."""
    summaries = [
        extract_source(textwrap.dedent(src), path, path[:-3].replace("/", "."), False)
        for path, src in files.items()
    ]
    config = MigratorConfig.from_toml("")
    _, jobs = classify(summaries, config, Catalogue.load(config.catalogue))
    return {job.qualname: job for job in jobs}
