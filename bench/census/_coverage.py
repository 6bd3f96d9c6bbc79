"""Sink coverage: which syntactic sink calls the inventory attributes to a reported job,
and for the others, why not (the buckets are defined in ``bench/census/README.md``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from bench.census._catalogue import SinkCatalogue
from bench.census._finder import (
    MatchHow,
    Sink,
    drop_own_keyword_calls,
    find_in_tree,
    imports_of,
    parse,
)
from bench.census._mentions import Mentions
from bench.census._scope import Root, Scope, offline_root
from inventory import Inventory

_SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", "build", "dist", ".tox", ".migrator", ".venv"}
    | {"site-packages", ".eggs", "migrations", "tests", "test"}
)
_METHOD_MATCHES = frozenset({MatchHow.METHOD_NAME, MatchHow.KEYWORD})


class Bucket(StrEnum):
    """Why a sink call is not attributed, first that holds wins (in this order)."""

    NOT_SCANNED = "not_scanned"  # the scan produced no inventory (timeout, crash, failure)
    # Correct misses (``_scope``): no request reaches the sink, and the scan did not walk it.
    IN_QUEUED_TASK = "in_queued_task"  # only a job queue's worker runs it
    CLI_ONLY = "cli_only"  # only a command line runs it
    IMPORT_TIME = "import_time"  # module or class bodies, start-up code
    UNREFERENCED = "unreferenced"  # nothing in the package names it
    UNRESOLVED_RECEIVER = "unresolved_receiver"  # matched by method name, receiver unbound
    UNKNOWN_FRAMEWORK = "unknown_framework"  # no site of the package has a framework handler
    REACHED_NOT_RECOGNISED = "reached_not_recognised"  # its function is on a job's chain
    NO_ENTRY_POINT = "no_entry_point"  # its function is on no job's chain


OFFLINE = frozenset(
    {Bucket.IN_QUEUED_TASK, Bucket.CLI_ONLY, Bucket.IMPORT_TIME, Bucket.UNREFERENCED}
)
_ROOT_BUCKET = {
    Root.QUEUED_TASK: Bucket.IN_QUEUED_TASK,
    Root.CLI: Bucket.CLI_ONLY,
    Root.IMPORT_TIME: Bucket.IMPORT_TIME,
    Root.UNREFERENCED: Bucket.UNREFERENCED,
}


@dataclass
class Coverage:
    sinks: list[Sink]
    attributed: list[Sink] = field(default_factory=list)
    uncovered: list[tuple[Sink, Bucket]] = field(default_factory=list)

    @property
    def share(self) -> float | None:
        return len(self.attributed) / len(self.sinks) if self.sinks else None

    @property
    def in_scope(self) -> int:
        """Sinks that are no correct miss (every sink but the offline buckets)."""
        return len(self.sinks) - sum(b in OFFLINE for _, b in self.uncovered)

    @property
    def in_scope_share(self) -> float | None:
        return len(self.attributed) / self.in_scope if self.in_scope else None

    def buckets(self) -> Counter[str]:
        return Counter(b.value for _, b in self.uncovered)


def package_files(root: Path, inventory: Inventory | None) -> list[str]:
    """The files the scan read (its ``file_hashes``), else the scan's own skip rules, roughly."""
    if inventory is not None and inventory.file_hashes:
        return sorted(inventory.file_hashes)
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts[:-1]):
            continue
        if not _is_test_file(rel.name):
            found.append(rel.as_posix())
    return sorted(found)


def _is_test_file(name: str) -> bool:
    return (
        name in ("conftest.py", "tests.py") or name.startswith("test_") or name.endswith("_test.py")
    )


def package_sinks(root: Path, files: list[str], catalogue: SinkCatalogue) -> list[Sink]:
    return read_package(root, files, catalogue)[0]


def read_package(
    root: Path, files: list[str], catalogue: SinkCatalogue
) -> tuple[list[Sink], Scope]:
    """The package's sinks, and the rule that says which of them no request reaches; each
    file is parsed once for both."""
    sinks: list[Sink] = []
    defined: set[str] = set()
    mentions = Mentions(roots=_package_names(files))
    for rel in files:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        tree = parse(text)
        if tree is None:
            continue
        imports = imports_of(tree)
        found, names = find_in_tree(tree, text, rel, catalogue, imports)
        sinks += found
        defined |= names
        mentions.add_file(tree, rel, imports)
    return drop_own_keyword_calls(sinks, defined), Scope(mentions)


def _package_names(files: list[str]) -> frozenset[str]:
    """Every folder and module name of the package's files: an import starting with one
    of them is the package's own (``src/`` layouts and namespace folders included)."""
    return frozenset(part.removesuffix(".py") for rel in files for part in rel.split("/"))


def attribute(
    sinks: list[Sink], inventory: Inventory | None, scope: Scope | None = None
) -> Coverage:
    """Split ``sinks`` into attributed and uncovered-with-a-bucket against ``inventory``;
    with ``scope``, a sink no request reaches and the scan did not walk is a correct miss."""
    coverage = Coverage(sinks)
    places = _reported_places(inventory) if inventory is not None else set()
    kinds = _reported_kinds(inventory) if inventory is not None else set()
    reached = _reached(inventory) if inventory is not None else set()
    framework = inventory is not None and any(s.handler is not None for s in inventory.sites)
    for sink in sinks:
        if (sink.path, sink.line) in places or _same_kind_reported(sink, kinds):
            coverage.attributed.append(sink)
        else:
            bucket = _bucket(sink, inventory, framework, reached, scope)
            coverage.uncovered.append((sink, bucket))
    return coverage


def _bucket(
    sink: Sink,
    inventory: Inventory | None,
    framework: bool,
    reached: set[str],
    scope: Scope | None,
) -> Bucket:
    if inventory is None:
        return Bucket.NOT_SCANNED
    offline = _offline(sink, reached, scope)
    if offline is not None:
        return offline
    if sink.how in _METHOD_MATCHES:
        return Bucket.UNRESOLVED_RECEIVER
    if not framework:
        return Bucket.UNKNOWN_FRAMEWORK
    if _is_reached(sink.function, reached):
        return Bucket.REACHED_NOT_RECOGNISED
    return Bucket.NO_ENTRY_POINT


def _offline(sink: Sink, reached: set[str], scope: Scope | None) -> Bucket | None:
    if scope is None or _is_reached(sink.function, reached):
        return None  # a function the scan walked is in scope whoever calls it
    root = offline_root(scope.roots(sink.function, sink.line))
    return _ROOT_BUCKET[root] if root is not None else None


def _reported_places(inventory: Inventory) -> set[tuple[str, int]]:
    """(path, line) of every site, and of every effect and evidence of every job."""
    places = {(s.location.path, s.location.line) for s in inventory.sites}
    for job in inventory.jobs:
        places |= {(e.location.path, e.location.line) for e in job.effects}
        places |= {(v.location.path, v.location.line) for v in job.evidence if v.location}
    return places


def _reported_kinds(inventory: Inventory) -> set[tuple[str, str, str]]:
    """(path, function, kind) of every effect: the scan reports one effect per API and
    function, so a repeated call (three ``Paragraph(...)`` in one PDF builder) is covered
    by the first one's report."""
    return {
        (e.location.path, e.chain[-1], e.kind.value)
        for job in inventory.jobs
        for e in job.effects
        if e.chain
    }


def _same_kind_reported(sink: Sink, kinds: set[tuple[str, str, str]]) -> bool:
    return (sink.path, sink.function, sink.kind.value) in kinds


def _reached(inventory: Inventory) -> set[str]:
    """Qualified names of the jobs, of every function on their effect and evidence chains,
    and of the functions that hold a site."""
    names = {j.qualname for j in inventory.jobs}
    names |= {s.enclosing_function for s in inventory.sites if s.enclosing_function}
    for job in inventory.jobs:
        for effect in job.effects:
            names.update(effect.chain)
        for evidence in job.evidence:
            names.update(evidence.chain)
    return names


def _is_reached(function: str, reached: set[str]) -> bool:
    """Exact, or equal once a leading folder (``src.``) the scan did not count is dropped."""
    if function in reached:
        return True
    parts = function.split(".")
    return any(".".join(parts[i:]) in reached for i in range(1, min(3, len(parts))))
