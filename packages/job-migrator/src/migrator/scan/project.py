"""The scan of one project: the request, the typed outcome, and the call between them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from inventory import (
    CallSite,
    Idempotency,
    Inventory,
    ProgressCallback,
    ScanError,
    ScanErrorKind,
    scan,
)
from inventory.config import MigratorConfig, ScanConfigError
from inventory.project import PythonEnvError, is_test_path
from migrator.errors import ExitCode, MigratorConfigError, ScanRootError
from migrator.scan.baseline import load_baseline, write_baseline
from migrator.scan.suppress import Suppressions, without_suppressed

# A file that does not parse is code the scan could not read: it may hold the very
# finding --fail-on is there to catch, so it fails the run (as ruff does) unless
# --ignore-errors says otherwise.
PARSE_ERRORS = frozenset({ScanErrorKind.SYNTAX, ScanErrorKind.ENCODING})
_PROJECT_MARKERS = ("pyproject.toml", ".git")


@dataclass(frozen=True)
class ScanRequest:
    root: Path
    baseline: Path | None = None
    update_baseline: bool = False
    fail_on: Idempotency | None = None
    use_cache: bool = True
    include_tests: bool = False
    jobs: int | None = None
    ignore_errors: bool = False  # files that do not parse are listed but do not fail the run
    python: str | None = None  # the project's interpreter: where its libraries are read
    write_inventory: bool = True  # ROOT/.migrator/inventory.json, which `migrator plan` reads


@dataclass
class ScanOutcome:
    inventory: Inventory
    baseline: frozenset[str] = frozenset()
    failing: list[CallSite] = field(default_factory=list)
    baseline_written: int | None = None  # how many fingerprints --update-baseline wrote
    unparsed: list[ScanError] = field(default_factory=list)  # failing the run
    suppressed: int = 0  # sites taken out by comments or per-file-ignores

    @property
    def exit_code(self) -> ExitCode:
        """FINDINGS when a site at or above ``--fail-on`` is not accepted by the baseline,
        or when a file does not parse (unless ``--ignore-errors``)."""
        return ExitCode.FINDINGS if self.failing or self.unparsed else ExitCode.OK


def failing_sites(
    inventory: Inventory, threshold: Idempotency | None, baseline: frozenset[str]
) -> list[CallSite]:
    if threshold is None:
        return []
    return [
        site
        for site in inventory.sites
        if site.idempotency.severity >= threshold.severity and site.fingerprint not in baseline
    ]


def _config(root: Path) -> MigratorConfig:
    try:
        return MigratorConfig.from_project(root)
    except ScanConfigError as exc:
        raise MigratorConfigError(str(exc)) from exc


def project_root(file: Path) -> Path:
    """The project a single file belongs to: the nearest folder above it with a
    ``pyproject.toml`` or ``.git`` (its verdicts need the rest of the project), else its folder."""
    for folder in file.resolve().parents:
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder
    return file.resolve().parent


def narrowed(inventory: Inventory, rel: str) -> Inventory:
    """The sites (and their jobs, and the errors) of one file of a whole-project inventory."""
    sites = [site for site in inventory.sites if site.location.path == rel]
    jobs = {site.job for site in sites}
    return inventory.model_copy(
        update={
            "sites": sites,
            "jobs": [job for job in inventory.jobs if job.qualname in jobs],
            "errors": [error for error in inventory.errors if error.path == rel],
        }
    )


def scan_project(request: ScanRequest, progress: ProgressCallback | None = None) -> ScanOutcome:
    """Scan a folder, or one ``.py`` file in the context of its project."""
    root, only = _target(request.root)
    # A single file named on the command line is scanned even when it is test code.
    include_tests = request.include_tests or (only is not None and is_test_path(only))
    config = _config(root)
    try:
        inventory = scan(
            root,
            config=config,
            use_cache=request.use_cache,
            jobs=request.jobs,
            progress=progress,
            include_tests=include_tests,
            python=request.python,
            write=request.write_inventory,
        )
    except (
        ScanConfigError,
        PythonEnvError,
    ) as exc:  # a declared key that does not fit its job's parameters
        raise MigratorConfigError(str(exc)) from exc
    if only is not None:
        inventory = narrowed(inventory, only)
    suppressed = without_suppressed(inventory, Suppressions.of(root, config))
    if request.update_baseline and request.baseline is not None:
        written = write_baseline(request.baseline, inventory)
        fingerprints = frozenset(s.fingerprint for s in inventory.sites)
        return ScanOutcome(inventory, fingerprints, [], written, suppressed=suppressed)
    baseline = load_baseline(request.baseline) if request.baseline else frozenset()
    for site in inventory.sites:
        site.baselined = site.fingerprint in baseline
    failing = failing_sites(inventory, request.fail_on, baseline)
    unparsed = [] if request.ignore_errors else unparsed_files(inventory)
    return ScanOutcome(inventory, baseline, failing, unparsed=unparsed, suppressed=suppressed)


def unparsed_files(inventory: Inventory) -> list[ScanError]:
    return [error for error in inventory.errors if error.kind in PARSE_ERRORS]


def _target(path: Path) -> tuple[Path, str | None]:
    """(folder to scan, the one file to report on, relative to it, or None)."""
    if path.is_dir():
        return path.resolve(), None
    if path.is_file() and path.suffix == ".py":
        root = project_root(path)
        return root, path.resolve().relative_to(root).as_posix()
    raise ScanRootError(f"{path} is not a folder or a Python file")
