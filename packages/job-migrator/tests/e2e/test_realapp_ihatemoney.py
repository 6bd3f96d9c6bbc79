"""ihatemoney 7.2.1 (a Flask app by others, with its own suite) migrated end to end (issue 11).

Slow: the set-up downloads the pinned sdist and builds the app's venv
(``../shared/realapps/setup.sh``; ``MIGRATOR_REALAPPS_DIR`` caches it).

- ``test_the_unmigrated_suite_passes_through_the_harness``: the harness itself
  (146 passed, 5 skipped, as the set-up's README says).
- ``test_ihatemoney_code_runs_in_a_real_worker_with_the_flask_bootstrap``: the
  app's own ``send_email`` in a ``queue-runtime worker`` with ``--flask-app``:
  one mail, sent by the worker, with a link built for the configured server.
- ``test_ihatemoney_end_to_end``: what issue 11 asks (scan, plan, apply, the
  suite inline, then with workers and the gate satisfied by a real load test,
  every expected mail sent once by a worker, also with one worker SIGKILLed).
  It fails today at the apply step (see its xfail reason); its assertions are
  the issue's and are not to be weakened.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from queue_runtime import get_job
from queue_runtime.runtime import Runtime
from queue_runtime.store import NewJob
from queue_runtime.testing import WorkerSpawner, isolated_settings, pg_admin_url, unique_name
from tests.e2e.realapps.harness import (
    SHARED,
    AppTree,
    Outbox,
    install_runtime,
    migrator,
    prepare,
    run_suite,
    uninstall_runtime,
    workspace,
)
from tests.support import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (SHARED / "setup.sh").exists(), reason=f"no {SHARED}"),
]
HERE = Path(__file__).resolve().parent / "realapps"
SERVER = "budget.example"
# The five mails ihatemoney sends while a request is handled (shared/realapps/README.md).
MAIL_SITES = 5
API_MAIL_SITES = 2  # in Flask-RESTful API methods: the scan misses these today


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> AppTree:
    return prepare("ihatemoney", SHARED, workspace(tmp_path_factory.mktemp("realapps")))


def _worker_env(tree: AppTree, tmp: Path, outbox: Path) -> dict[str, str]:
    cfg = tmp / "ihatemoney.cfg"
    cfg.write_text(
        f'SQLALCHEMY_DATABASE_URI = "sqlite:///{tmp / "worker.db"}"\n'
        'SECRET_KEY = "realapp-worker"\nMAIL_SUPPRESS_SEND = True\n'
    )
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), str(tree.src)]),
        "IHATEMONEY_SETTINGS_FILE_PATH": str(cfg),
        "REALAPP_OUTBOX": str(outbox),
        "REALAPP_PROCESS": "worker",
        "PATH": f"{tree.python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


class AppWorkers(WorkerSpawner):
    """``queue-runtime worker`` processes run by the app's own venv python."""

    def __init__(self, tree: AppTree, logdir: Path, app: str, env: dict[str, str]) -> None:
        super().__init__(logdir, app, cwd=logdir, env=env)
        self.python = str(tree.python)

    def start(self, settings, *args):  # type: ignore[no-untyped-def, override]
        import subprocess

        from queue_runtime.testing.spawner import SETTINGS_ENV

        env = {**(self.env or {}), SETTINGS_ENV: settings.model_dump_json(by_alias=True)}
        command = [self.python, "-m", "queue_runtime.cli", "worker", self.app, *args]
        log = self.logdir / f"worker-{len(self.procs)}.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(command, cwd=self.cwd, env=env, stdout=out, stderr=out)
        self.procs.append(proc)
        return proc


@pytest.fixture
def queue() -> Iterator[Runtime]:
    from queue_runtime import configure, migrate

    with isolated_settings(pg_admin_url(), unique_name(), migrated=False) as settings:
        migrate(settings)
        rt = configure(settings)
        try:
            yield rt
        finally:
            rt.close()


def test_the_unmigrated_suite_passes_through_the_harness(tree: AppTree) -> None:
    uninstall_runtime(tree)
    counts = run_suite(tree)
    assert (counts.passed, counts.failed, counts.skipped) == (146, 0, 5)


@pytest.mark.pg
@pytest.mark.redis
def test_ihatemoney_code_runs_in_a_real_worker_with_the_flask_bootstrap(
    tree: AppTree, queue: Runtime, tmp_path: Path
) -> None:
    install_runtime(tree)
    outbox = Outbox(tmp_path / "outbox.jsonl")
    env = _worker_env(tree, tmp_path, outbox.path)
    workers = AppWorkers(tree, tmp_path, "ihatemoney_jobs", env)
    flags = ["--flask-app", "ihatemoney.run:create_app", "--server-name", SERVER]
    try:
        workers.start(queue.settings, *flags, "--url-scheme", "https")
        job_id = queue.store.enqueue(
            NewJob("realapps.ihatemoney.welcome_mail", "batch", {"address": "a@b.example"})
        )
        assert get_job(job_id).result(timeout=60) is True, workers.logs()
    finally:
        workers.stop_all()
    (mail,) = outbox.mails()
    assert mail["process"] == "worker" and mail["to"] == ["a@b.example"]
    assert f"https://{SERVER}/" in str(mail["body"])


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.xfail(
    reason=(
        "issue 11 is not done: the scan and plan find ihatemoney's 5 mail sites, but apply"
        " moves none of them yet (see docs/realapps.md)"
    ),
    strict=True,
)
def test_ihatemoney_end_to_end(tree: AppTree, queue: Runtime, tmp_path: Path) -> None:
    src = tree.src
    # 1. scan: every mail site, the two in API methods included
    scan = migrator("scan", ".", cwd=src)
    inventory = json.loads((src / ".migrator" / "inventory.json").read_text())
    mail_jobs = [
        j["qualname"] for j in inventory["jobs"] if any("email" in e["kind"] for e in j["effects"])
    ]
    mail_sites = [s for s in inventory["sites"] if s["job"] in mail_jobs]
    assert len(mail_sites) >= MAIL_SITES, scan.stdout
    in_api = [s for s in mail_sites if s["location"]["path"].startswith("ihatemoney/api/")]
    assert len(in_api) >= API_MAIL_SITES, scan.stdout
    # 2. plan: the notification fast track suggests keys for the mail jobs
    plan = migrator("plan", ".", cwd=src)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    text = (src / "MIGRATION_PLAN.md").read_text()
    keys = [line.split("`")[1] for line in text.splitlines() if "--key" in line and "`" in line]
    assert keys, "the plan suggests no idempotency key for the mail jobs"
    # 3. apply the idempotent jobs and the mail jobs with the suggested keys
    applied = migrator("apply", ".", "--write", "--allow-dirty", *keys, cwd=src)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "--flask-app ihatemoney.run:create_app" in applied.stdout  # what workers need
    # 4. the app's own suite, inline
    install_runtime(tree)
    inline = run_suite(tree, {"QUEUE_RUNTIME_MODE": "inline"})
    assert (inline.passed, inline.failed, inline.skipped) == (146, 0, 5)
    # 5. with real workers, rollout async, the gate satisfied by a load test: every mail
    #    the suite expects is sent once, by a worker; again with one worker SIGKILLed.
    for kill in (False, True):
        outbox = Outbox(tmp_path / f"outbox-{kill}.jsonl")
        env = _worker_env(tree, tmp_path, outbox.path)
        workers = AppWorkers(tree, tmp_path / f"w{kill}", "ihatemoney.emails", env)
        (tmp_path / f"w{kill}").mkdir()
        flags = ["--flask-app", "ihatemoney.run:create_app", "--server-name", SERVER]
        try:
            first = workers.start(queue.settings, *flags)
            workers.start(queue.settings, *flags)
            for name in mail_jobs:
                migrator("rollout", "set", name, "async", cwd=src)
            suite_env = {
                "QUEUE_RUNTIME_DATABASE_URL": queue.settings.database_url or "",
                "REALAPP_OUTBOX": str(outbox.path),
            }
            with ThreadPoolExecutor(1) as pool:
                running = pool.submit(run_suite, tree, suite_env)
                if kill:  # mid-run: once the workers have sent a first mail
                    wait_until(outbox.mails, timeout=300, message="a first mail")
                    workers.kill(first, signal.SIGKILL)
                counts = running.result()
            assert (counts.passed, counts.failed, counts.skipped) == (146, 0, 5)
            mails = outbox.mails()
            assert mails and all(m["process"] == "worker" for m in mails)
            assert len({json.dumps(m, sort_keys=True) for m in mails}) == len(mails)
        finally:
            workers.stop_all()
