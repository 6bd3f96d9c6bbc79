"""Real apps written by others, prepared from their pinned sdists, migrated and run for real.

The set-up scripts download and check the sdist and build the app's venv:
ihatemoney's lives in ``../shared/realapps`` (beside the clone, read-only in CI),
the Django app's in this repository (``realapps/``). Downloads are cached in
``MIGRATOR_REALAPPS_DIR`` when it is set (a developer's machine); without it
each run sets up from scratch in a temporary folder, as CI does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from queue_runtime import Settings
from queue_runtime.gate import certification
from queue_runtime.runtime import Runtime
from queue_runtime.store import JobQuery, JobStatus
from queue_runtime.testing import WorkerSpawner, isolated_settings, pg_admin_url, unique_name

REPO = Path(__file__).resolve().parents[5]
SHARED = REPO.parent / "shared" / "realapps"
OWN = REPO / "realapps"
RUNTIME_DIST = REPO / "packages" / "queue-runtime"
MIGRATOR_DIST = REPO / "packages" / "job-migrator"
HERE = Path(__file__).resolve().parent  # the harness's modules: outbox, bridge, worker app
_PTH = "realapps_harness.pth"
CACHE_ENV = "MIGRATOR_REALAPPS_DIR"
_COUNTS = re.compile(r"^(\w+: )?(\d+) passed, (\d+) failed, (\d+) skipped$", re.MULTILINE)


@dataclass(frozen=True)
class SuiteCounts:
    passed: int
    failed: int
    skipped: int


@dataclass(frozen=True)
class AppTree:
    """One prepared app: its source tree (what is scanned and migrated) and its venv."""

    name: str
    home: Path  # DEST: what the set-up and run scripts take
    scripts: Path  # the folder holding setup.sh / run_tests.sh for this app

    @property
    def src(self) -> Path:
        return self.home / self.name / "src"

    @property
    def python(self) -> Path:
        return self.home / self.name / ".venv" / "bin" / "python"


def workspace(fallback: Path) -> Path:
    """The download cache of a developer (``MIGRATOR_REALAPPS_DIR``), else ``fallback``."""
    cached = os.environ.get(CACHE_ENV)
    return Path(cached) if cached else fallback


def prepare(name: str, scripts: Path, home: Path) -> AppTree:
    """Run the app's set-up script (pristine source tree each time: ``REALAPP_FRESH=1``)."""
    env = {**os.environ, "REALAPP_FRESH": "1", "PYTHON": _python311()}
    _run(["bash", str(scripts / "setup.sh"), str(home), name], env=env, timeout=1200)
    (home / name).mkdir(parents=True, exist_ok=True)
    return AppTree(name, home, scripts)


def install_runtime(tree: AppTree) -> None:
    """queue-runtime (this checkout) into the app's venv: the migrated app imports it."""
    command = [str(tree.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*command, "-e", str(RUNTIME_DIST)], timeout=600)


def install_migrator(tree: AppTree) -> None:
    """job-migrator too, and this harness's modules on the venv's path (a ``.pth`` file).

    ``migrator loadtest`` imports the app's job and runs the app's workers, so it runs
    in the app's environment, as a team installs the tool beside its app. The app's run
    script sets ``PYTHONPATH`` itself; the ``.pth`` is how its suite finds the outbox
    and bridge plugins (``REALAPP_PYTEST_ARGS="-p ihatemoney_outbox"``).
    """
    command = [str(tree.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*command, "-e", str(RUNTIME_DIST), "-e", str(MIGRATOR_DIST)], timeout=600)
    (_site_packages(tree) / _PTH).write_text(f"{HERE}\n")


def uninstall_runtime(tree: AppTree) -> None:
    """No queue-runtime (nor job-migrator, nor the harness's path) in the app's venv (a
    cached venv may hold them from an earlier run): the unmigrated app must not see them,
    nor the runtime's pytest plugin."""
    command = [str(tree.python), "-m", "pip", "uninstall", "--quiet", "--yes"]
    _run([*command, "job-migrator", "queue-runtime"], timeout=300, check=False)
    (_site_packages(tree) / _PTH).unlink(missing_ok=True)


def configure_queue(tree: AppTree, settings: Settings, **fields: str) -> None:
    """The migrated app's ``[tool.queue_runtime]``: the queue's schema and Redis prefix (the
    URLs come from the environment), plus ``fields`` (``flask_app``, ``server_name``...).

    What a team writes when it adopts the runtime; ``migrator loadtest --certify-into``
    and ``migrator rollout`` read the schema from it, as the app's own processes do.
    """
    table = {
        "schema": settings.schema_name,
        "redis_prefix": settings.redis_prefix,
        "poll_interval": 0.1,
        "rollout_refresh": 0.1,
        "lease_ttl": 3.0,  # a SIGKILLed worker's job is claimed again within seconds
        **fields,
    }
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    path = tree.src / "pyproject.toml"
    path.write_text(f"{path.read_text()}\n[tool.queue_runtime]\n{lines}")


def registered_jobs(tree: AppTree, modules: Iterable[str]) -> list[str]:
    """The names of the jobs ``modules`` register, imported by the app's python."""
    code = (
        "import importlib, json, sys\n"
        "from queue_runtime.jobs import JobFunction\n"
        "found = [v.name for m in sys.argv[1:] for v in vars(importlib.import_module(m)).values()"
        " if isinstance(v, JobFunction)]\n"
        "print(json.dumps(sorted(set(found))))\n"
    )
    out = _run([str(tree.python), "-c", code, *modules], timeout=120, cwd=tree.src)
    return list(json.loads(out.strip().splitlines()[-1]))


def app_migrator(
    tree: AppTree, *args: str, env: Mapping[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``migrator ARGS`` installed in the app's venv (:func:`install_migrator`), in its tree."""
    return subprocess.run(
        [str(tree.python), "-c", "from migrator.cli import main; main()", *args],
        cwd=tree.src,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_suite(tree: AppTree, env: Mapping[str, str] | None = None) -> SuiteCounts:
    """The app's own test suite through its run script; the counts of its last line."""
    merged = {**os.environ, **(env or {})}
    out = _run(
        ["bash", str(tree.scripts / "run_tests.sh"), str(tree.home), tree.name],
        env=merged,
        timeout=1500,
        check=False,
    )
    found = _COUNTS.findall(out)
    if not found:
        raise AssertionError(f"no summary line from the app's suite:\n{out[-3000:]}")
    _, passed, failed, skipped = found[-1]
    return SuiteCounts(int(passed), int(failed), int(skipped))


def migrator(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``migrator ARGS`` of this checkout, run in ``cwd``."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "migrator"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@contextmanager
def fresh_queue() -> Iterator[Runtime]:
    """The app's queue: a database of its own, migrated, dropped afterwards."""
    from queue_runtime import configure, migrate

    with isolated_settings(pg_admin_url(), unique_name(), migrated=False) as settings:
        migrate(settings)
        rt = configure(settings)
        try:
            yield rt
        finally:
            rt.close()


def queue_env(queue: Runtime) -> dict[str, str]:
    """What points the app's own processes (suite, loadtest) at the queue."""
    return {
        "QUEUE_RUNTIME_DATABASE_URL": queue.settings.database_url or "",
        "QUEUE_RUNTIME_REDIS_URL": queue.settings.redis_url or "",
    }


def app_workers(tree: AppTree, logdir: Path, app: str, env: Mapping[str, str]) -> WorkerSpawner:
    """``queue-runtime worker APP`` processes run by the app's venv python, in its tree."""
    return WorkerSpawner(logdir, app, cwd=tree.src, env=env, python=str(tree.python))


def succeeded(queue: Runtime, *names: str) -> int:
    """How many jobs of these names the queue holds as succeeded."""
    count = 0
    for name in names:
        after = None
        while True:
            query = JobQuery(state=JobStatus.SUCCEEDED, job=name, after=after, limit=500)
            page = queue.inspector.list_jobs(query)
            count += len(page.jobs)
            if page.next_after is None:
                break
            after = page.next_after
    return count


def certify(
    tree: AppTree,
    queue: Runtime,
    name: str,
    report: Path,
    *,
    sandbox: str,
    rate: int,
    env: Mapping[str, str],
    **bootstrap: str,
) -> None:
    """A real ``migrator loadtest NAME`` with SIGKILLs, in a sandbox queue of its own; its
    pass certifies NAME into the app's queue. ``sandbox``: the module whose ``projects`` /
    ``messages`` make the jobs' arguments (``MODULE:ATTR``); ``bootstrap``: the sandbox
    Settings' framework fields (``flask_app``, ``django_settings``, ``server_name``)."""
    module = sandbox.split(":")[0]
    with isolated_settings(
        pg_admin_url(),
        unique_name(),
        lease_ttl=2.0,
        poll_interval=0.1,
        shutdown_grace=2.0,
        rollout_refresh=0.1,
        **bootstrap,
    ) as box:
        done = app_migrator(
            tree,
            "loadtest", name, "--sandbox", module, "--args", sandbox, "--key", "lt-{run}-{i}",
            "--rate", str(rate), "--duration", "4s", "--chaos", "kill-workers", "--kills", "1",
            "--workers", "2", "--sla-p99-ms", "15000", "--drain-timeout", "60s",
            "--certify-by", "e2e", "--certify-into", queue.settings.database_url or "",
            "--json", str(report),
            env={
                **env,
                "REALAPP_SANDBOX_SETTINGS": box.model_dump_json(by_alias=True),
                **queue_env(queue),
            },
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    found = json.loads(report.read_text())
    assert found["passed"] and found["certified"], found["reasons"]
    assert found["duplicate_completions"] == [] and found["lost"] == 0
    assert certification(queue, name, found["fingerprint"]) is not None


class Outbox:
    """A JSON-lines file every mail sent by any process of the app is appended to."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mails(self) -> list[dict[str, object]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def by_sender_process(self) -> Iterator[tuple[str, dict[str, object]]]:
        for mail in self.mails():
            yield str(mail.get("process")), mail


def _python311() -> str:
    # The apps' venvs are built by a 3.11 interpreter: the one running the tests, whose
    # venv is not a base a venv can be made from, so its base interpreter.
    return os.environ.get("PYTHON") or getattr(sys, "_base_executable", sys.executable)


def _site_packages(tree: AppTree) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(_run([str(tree.python), "-c", code], timeout=60).strip().splitlines()[-1])


def _run(
    command: list[str],
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    check: bool = True,
    cwd: Path | None = None,
) -> str:
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd
    )
    out = done.stdout + done.stderr
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited {done.returncode}:\n{out[-4000:]}")
    return out
