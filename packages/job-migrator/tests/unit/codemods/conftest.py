"""Hand-made inventories for codemod tests: source strings, sites and verdicts given by hand.

One fact is the scanner's own, never written by hand: what a job changes of the objects it
is given (``Job.changes``), for the jobs of signal receivers, read by a real scan of the
test's tree (a post_delete receiver moves with a copy of its instance only when it changes
nothing of it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inventory import scan, surroundings_at
from inventory._extract import extract_source
from inventory.models import (
    Argument,
    CallSite,
    Confidence,
    Idempotency,
    Inventory,
    Job,
    Location,
    Pattern,
)
from tools.apply_docs import site_line

# (path, fragment of the site's line, pattern, job qualname[, target as written at the site])
Site = tuple[str, ...] | tuple[str, str, Pattern, str]


def build_inventory(
    root: Path,
    sites: list[Site],
    verdicts: dict[str, Idempotency] | None = None,
    **site_fields: object,
) -> Inventory:
    """Sites at the first line containing each fragment; jobs defined where ``def name(`` is.
    What the scanner reads around each site (``surroundings``) and the project's
    ``ATOMIC_REQUESTS`` settings come from the scanner's own readers."""
    verdicts = verdicts or {}
    call_sites = []
    for site in sites:
        path, fragment, pattern = site[:3]
        text = (root / path).read_text()
        line = site_line(text, fragment)
        fields = {"surroundings": surroundings_at(text, line), **site_fields}
        call_sites.append(
            CallSite(
                location=Location(path=path, line=line),
                pattern=pattern,
                job=site[3],
                target_source=site[4] if len(site) > 4 else "",
                **fields,  # type: ignore[arg-type]
            )
        )
    qualnames = sorted({str(s[3]) for s in sites})
    jobs = [_job(root, q, verdicts) for q in qualnames]
    if any(s.pattern is Pattern.SIGNAL_RECEIVER for s in call_sites):
        jobs = _scanned_changes(root, jobs)
    return Inventory(
        root=str(root),
        sites=call_sites,
        jobs=jobs,
        atomic_requests=_atomic_requests(root),
    )


def _scanned_changes(root: Path, jobs: list[Job]) -> list[Job]:
    """Each job with the ``changes`` a real scan of ``root`` gives it (None if not found)."""
    scanned = scan(root, use_cache=False, write=False, jobs=1)
    found = {j.qualname: j.changes for j in scanned.jobs}
    return [j.model_copy(update={"changes": found.get(j.qualname)}) for j in jobs]


def _atomic_requests(root: Path) -> list[str]:
    """``Inventory.atomic_requests`` as the scanner reads it, from the modules under root."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if "ATOMIC_REQUESTS" in text:
            rel = path.relative_to(root).as_posix()
            summary = extract_source(text, rel, rel.removesuffix(".py").replace("/", "."))
            found += [f"{rel}:{line}" for line in summary.atomic_requests]
    return found


def _job(root: Path, qualname: str, verdicts: dict[str, Idempotency]) -> Job:
    name = qualname.rsplit(".", 1)[-1]
    own = root / (qualname.rsplit(".", 1)[0].replace(".", "/") + ".py")
    # The job's own module first (a method of the same name elsewhere is another function).
    for path in [own] * own.is_file() + sorted(root.rglob("*.py")):
        text = path.read_text()
        if f"def {name}(" in text:
            line = site_line(text, f"def {name}(")
            params = text.splitlines()[line - 1].split("(", 1)[1].split(")", 1)[0]
            return Job(
                qualname=qualname,
                location=Location(path=path.relative_to(root).as_posix(), line=line),
                idempotency=verdicts.get(qualname, Idempotency.IDEMPOTENT),
                confidence=Confidence.HIGH,
                parameters=[
                    p.split(":")[0].split("=")[0].strip() for p in params.split(",") if p.strip()
                ],
            )
    return Job(
        qualname=qualname,
        idempotency=verdicts.get(qualname, Idempotency.IDEMPOTENT),
        confidence=Confidence.LOW,
    )


@pytest.fixture
def write_files(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    def write(files: dict[str, str]) -> Path:
        for rel, text in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())
        return tmp_path

    return write


def unserialisable(source: str, reason: str) -> list[Argument]:
    return [Argument(name="#0", source=source, serialisable=False, reason=reason)]


@pytest.fixture(name="build_inventory")
def build_inventory_fixture() -> Callable[..., Inventory]:
    """``build_inventory(root, sites, verdicts=None, **site_fields)``."""
    return build_inventory


@pytest.fixture(name="unserialisable")
def unserialisable_fixture() -> Callable[[str, str], list[Argument]]:
    return unserialisable
