"""``migrator scan`` as a library call: scan, apply the baseline, judge ``--fail-on``.

The command line only parses options, calls :func:`scan_project` and renders
the :class:`ScanOutcome`; everything here works the same from Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from inventory import CallSite, Idempotency, Inventory, ProgressCallback, scan
from inventory.config import ConfigError, MigratorConfig
from migrator.baseline import load_baseline, write_baseline
from migrator.errors import ConfigurationError, ExitCode, ScanRootError


@dataclass(frozen=True)
class ScanRequest:
    root: Path
    baseline: Path | None = None
    update_baseline: bool = False
    fail_on: Idempotency | None = None
    use_cache: bool = True
    include_tests: bool = False
    jobs: int | None = None


@dataclass
class ScanOutcome:
    inventory: Inventory
    baseline: frozenset[str] = frozenset()
    failing: list[CallSite] = field(default_factory=list)
    baseline_written: int | None = None  # how many fingerprints --update-baseline wrote

    @property
    def exit_code(self) -> ExitCode:
        """FINDINGS when a site at or above ``--fail-on`` is not accepted by the baseline."""
        return ExitCode.FINDINGS if self.failing else ExitCode.OK


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
    except ConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def scan_project(request: ScanRequest, progress: ProgressCallback | None = None) -> ScanOutcome:
    if not request.root.is_dir():
        raise ScanRootError(f"{request.root} is not a folder")
    try:
        inventory = scan(
            request.root,
            config=_config(request.root.resolve()),
            use_cache=request.use_cache,
            jobs=request.jobs,
            progress=progress,
            include_tests=request.include_tests,
        )
    except ConfigError as exc:  # a declared key that does not fit its job's parameters
        raise ConfigurationError(str(exc)) from exc
    if request.update_baseline and request.baseline is not None:
        written = write_baseline(request.baseline, inventory)
        return ScanOutcome(
            inventory, frozenset(s.fingerprint for s in inventory.sites), [], written
        )
    baseline = load_baseline(request.baseline) if request.baseline else frozenset()
    for site in inventory.sites:
        site.baselined = site.fingerprint in baseline
    return ScanOutcome(inventory, baseline, failing_sites(inventory, request.fail_on, baseline))
