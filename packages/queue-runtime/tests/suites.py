"""Which suite a test belongs to, by rule, and what ``python -m pytest`` runs by default.

The README's test command runs the fast suite: unit, contract and integration tests
against the real servers. The slow suites run in CI as steps of their own (``.ci/run``).
A test joins a slow suite by where it lives or what it uses, so a new one lands in its
suite without anyone remembering a mark:

- a conftest names its folders' rules: ``register(config, here, {"e2e/*": "e2e"})``
  (globs relative to ``here``, the first that matches wins);
- everywhere: a test using the ``browser`` fixture is ``browser``, the ``redis_cluster`` /
  ``fresh_redis_cluster`` fixtures ``cluster``, a fixture typed as a worker spawner
  (its return annotation names ``WorkerSpawner`` or a ``*Spawner`` subclass) ``workers``;
- an explicit suite mark (``@pytest.mark.cluster``) wins over the rules.

Each suite marker implies ``slow``. Slow tests are left out unless asked for: by ``-m``
(``-m browser``, ``-m slow``, ``-m ""`` for everything) or by naming their file or node
id on the command line. The markers are registered in ``pyproject.toml``.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

import pytest

SUITES = ("realapps", "loadtest", "e2e", "browser", "cluster", "workers", "bench")
FIXTURES = {"browser": "browser", "redis_cluster": "cluster", "fresh_redis_cluster": "cluster"}
SPAWNER = "Spawner"  # in a fixture's return annotation: the test starts worker processes


@dataclass(frozen=True)
class FolderRules:
    root: Path
    files: Mapping[str, str]  # glob relative to root -> suite


@dataclass
class Suites:
    """The plugin: marks every collected test, then leaves the slow ones out unless asked."""

    folders: list[FolderRules] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)

    @pytest.hookimpl(tryfirst=True)  # before pytest's own -m / -k selection
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        for item in items:
            self._mark(item)
        if _marker_expression_given(config):
            return
        named = _named_files(config)
        slow = [i for i in items if i.get_closest_marker("slow") and i.path.resolve() not in named]
        if slow:
            self.left_out.update(_suite_of(i) or "slow" for i in slow)
            config.hook.pytest_deselected(items=slow)
            dropped = set(map(id, slow))
            items[:] = [i for i in items if id(i) not in dropped]

    def pytest_report_collectionfinish(self) -> list[str]:
        if not self.left_out:
            return []
        counts = ", ".join(f"{suite} {n}" for suite, n in sorted(self.left_out.items()))
        return [f"slow suites left out ({counts}): -m SUITE runs one, -m slow all of them"]

    def _mark(self, item: pytest.Item) -> None:
        suite = _suite_of(item) or self._by_folder(item) or _by_fixtures(item)
        if suite is None:
            return
        if not item.get_closest_marker(suite):
            item.add_marker(suite)
        if not item.get_closest_marker("slow"):
            item.add_marker("slow")

    def _by_folder(self, item: pytest.Item) -> str | None:
        for folder in self.folders:
            if not item.path.is_relative_to(folder.root):
                continue
            relative = item.path.relative_to(folder.root).as_posix()
            for pattern, suite in folder.files.items():
                if fnmatch(relative, pattern):
                    return suite
        return None


def register(config: pytest.Config, root: Path, files: Mapping[str, str] | None = None) -> None:
    """Install the plugin once per run and add ``root``'s rules (call from pytest_configure)."""
    plugin = config.pluginmanager.get_plugin("suites")
    if plugin is None:
        plugin = Suites()
        config.pluginmanager.register(plugin, "suites")
    plugin.folders.append(FolderRules(root, dict(files or {})))


def _suite_of(item: pytest.Item) -> str:
    return next((s for s in SUITES if item.get_closest_marker(s)), "")


def _by_fixtures(item: pytest.Item) -> str | None:
    names = getattr(item, "fixturenames", ())
    for name in names:
        if name in FIXTURES:
            return FIXTURES[name]
    definitions = getattr(item, "_fixtureinfo", None)
    for name in names:
        for fixturedef in definitions.name2fixturedefs.get(name, ()) if definitions else ():
            if SPAWNER in str(inspect.signature(fixturedef.func).return_annotation):
                return "workers"
    return None


def _marker_expression_given(config: pytest.Config) -> bool:
    """``-m EXPR`` on the command line selects by itself, ``-m ""`` included."""
    args = config.invocation_params.args
    return bool(config.option.markexpr) or any(a.startswith("-m") for a in args)


def _named_files(config: pytest.Config) -> set[Path]:
    """Test files named on the command line (``path/test_x.py`` or a node id in it)."""
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return set()
    here = config.invocation_params.dir
    paths = (Path(here, arg.split("::")[0]).resolve() for arg in config.args)
    return {path for path in paths if path.is_file()}
