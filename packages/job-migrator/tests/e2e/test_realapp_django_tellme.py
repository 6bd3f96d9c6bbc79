"""django-tellme 0.7.3 (a Django app by others, with its own suite) migrated end to end (issue 11).

Slow: ``realapps/tellme/setup.sh`` downloads the pinned sdist and builds its venv
(``MIGRATOR_REALAPPS_DIR`` caches it). tellme's view saves a feedback row, then calls
``tellme.mail.send_mail(request, feedback)``, which builds a message from the request
(host, user, an admin URL) and lazy translations and sends it with Django's
``send_mail``. The function takes a request and a model instance: it cannot be a job. Its
Django mail call can: the message is still built in the request, and only its delivery
goes to a worker (``queue_runtime.django_mail``).

- ``test_the_unmigrated_suite_passes_through_the_harness``: 11 passed.
- ``test_django_tellme_end_to_end``: scan; plan (its JSON gives the mail job's apply
  step: no key, the delivery job's load test and rollout); apply (default: nothing, each
  with its reason; then the plan's step: the mail call rewritten); the suite inline (11
  passed), its two mails the reference; a real ``migrator loadtest`` of
  ``queue_runtime.django_mail.deliver`` with a SIGKILL certifies it into the app's queue;
  rollout async; the suite again with two real workers, then with the worker that sent the
  first mail SIGKILLed: the same mails as inline, each sent once, by a worker. How the
  suite waits for the workers: ``realapps/django_bridge.py``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from queue_runtime.runtime import Runtime
from tests.e2e.realapps.harness import (
    AppTree,
    Outbox,
    SuiteCounts,
    app_migrator,
    app_workers,
    certify,
    configure_queue,
    fresh_queue,
    install_migrator,
    migrator,
    prepare,
    queue_env,
    run_suite,
    succeeded,
    uninstall_runtime,
    workspace,
)

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent / "realapps"
SCRIPTS = HERE / "tellme"
NAME = "django-tellme"
SUITE = SuiteCounts(11, 0, 0)
JOB = "tellme.mail.send_mail"
DELIVER = "queue_runtime.django_mail.deliver"
APP_SETTINGS = "tellme.tests.testproject.settings"
WORKER_SETTINGS = "django_worker_settings"  # the app's test settings, mail recorded
MAILS = 2  # the suite's tests that post feedback and count mail.outbox


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> AppTree:
    return prepare(NAME, SCRIPTS, workspace(tmp_path_factory.mktemp("realapps")))


@pytest.fixture
def queue() -> Iterator[Runtime]:
    with fresh_queue() as rt:
        yield rt


def test_the_unmigrated_suite_passes_through_the_harness(tree: AppTree) -> None:
    uninstall_runtime(tree)
    assert run_suite(tree) == SUITE


def _app_env(tree: AppTree, outbox: Path, process: str) -> dict[str, str]:
    return {
        "PYTHONPATH": os.pathsep.join([str(HERE), str(tree.src)]),
        "REALAPP_OUTBOX": str(outbox),
        "REALAPP_PROCESS": process,
        "REALAPP_DJANGO_SETTINGS": APP_SETTINGS,
    }


def _squeezed(text: str) -> str:
    """Terminal output without whitespace and table borders: rich wraps long cells."""
    return "".join(c for c in text if not c.isspace() and c != "│")


def _mail_key(mail: dict[str, object]) -> str:
    # Recipients and subject: the bodies quote factory-made users and comments (Faker).
    return json.dumps({k: mail[k] for k in ("to", "subject")}, sort_keys=True)


def _built_in_the_request(mail: dict[str, object]) -> bool:
    """The body tellme builds from the request: its host, its user, an absolute admin URL."""
    body = str(mail["body"])
    return body.startswith("Your site testserver received feedback from ") and (
        "http://testserver/admin/tellme/feedback/" in body
    )


def _plan_step(src: Path) -> tuple[dict[str, object], list[str]]:
    """From the plan's JSON: the mail job's group, and its apply step's arguments."""
    plan = json.loads((src / ".migrator" / "plan.json").read_text())
    (group,) = [g for p in plan["phases"] for g in p["groups"] if g["job"] == JOB]
    (apply,) = [i for i in group["items"] if i["id"] == f"{JOB}/apply"]
    command = str(apply["command"]).split()
    assert command[:2] == ["migrator", "apply"], command
    return group, command[2:]


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.timeout(1500)  # scan, plan, apply, a load test, the app's suite three times
def test_django_tellme_end_to_end(tree: AppTree, queue: Runtime, tmp_path: Path) -> None:
    src = tree.src
    uninstall_runtime(tree)
    # 1. scan: the one mail site, Django's send_mail inside tellme.mail.send_mail
    scan = migrator("scan", ".", cwd=src)
    inventory = json.loads((src / ".migrator" / "inventory.json").read_text())
    (site,) = [s for s in inventory["sites"] if s["job"] == JOB]
    assert site["target_source"] == "django.core.mail.send_mail", scan.stdout
    assert site["location"]["path"] == "tellme/mail.py" and not site["result_used"]
    # 2. plan: the notification fast track; no key to declare; the delivery job's gate
    plan = migrator("plan", ".", cwd=src)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    group, step = _plan_step(src)
    assert group["fast_track"] and step == ["--job", JOB], group
    gated = {i["id"].rsplit("/", 1)[1]: i["job"] for i in group["items"]}  # type: ignore[union-attr]
    assert gated == {"apply": JOB, "loadtest": DELIVER, "rollout": DELIVER}
    # 3. apply: by default nothing moves (each with its reason); the plan's step moves the call
    default = migrator("apply", ".", "--write", "--allow-dirty", cwd=src)
    assert "jobs moved: none" in default.stdout, default.stdout + default.stderr
    assert f"--job{JOB}" in _squeezed(default.stdout), default.stdout  # rich wraps its cells
    applied = migrator("apply", ".", "--write", "--allow-dirty", *step, cwd=src)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    said = _squeezed(applied.stdout)
    assert f"jobsmoved:{JOB}" in said and "queue-runtimeworkerqueue_runtime.django_mail" in said
    code = (src / "tellme" / "mail.py").read_text()
    assert "django_mail.send_mail(" in code and "django_send_mail" not in code
    # 4. the app's own suite, inline; the mails it sends are the reference
    install_migrator(tree)
    reference = Outbox(tmp_path / "outbox-inline.jsonl")
    inline = run_suite(
        tree,
        {
            **_app_env(tree, reference.path, "suite"),
            "QUEUE_RUNTIME_MODE": "inline",
            "REALAPP_PYTEST_ARGS": "-p django_outbox",
        },
    )
    assert inline == SUITE
    expected = Counter(_mail_key(m) for m in reference.mails())
    assert sum(expected.values()) == MAILS
    assert all(m["process"] == "suite" and _built_in_the_request(m) for m in reference.mails())
    # 5. the gate: a real load test of the delivery job certifies it into the app's queue
    configure_queue(tree, queue.settings, django_settings=WORKER_SETTINGS)
    _certify(tree, queue, tmp_path)
    rollout = app_migrator(
        tree,
        "rollout", "set", DELIVER, "async", "--by", "e2e", "--app", "django_worker", "--force",
        "--reason", "e2e: the inline pass ran without a database: no shadow evidence",
        env={**_app_env(tree, tmp_path / "unused.jsonl", "suite"), **queue_env(queue)},
    )  # fmt: skip
    assert rollout.returncode == 0, rollout.stdout + rollout.stderr
    # 6. the suite again with two real workers, delivery async; then with one SIGKILLed
    for kill in (False, True):
        _async_pass(tree, queue, expected, tmp_path / f"async-{kill}", kill)


def _certify(tree: AppTree, queue: Runtime, tmp: Path) -> None:
    """``migrator loadtest`` of the delivery job in a sandbox, with SIGKILLs; a pass certifies."""
    env = _app_env(tree, tmp / "outbox-loadtest.jsonl", "loadtest")
    certify(
        tree,
        queue,
        DELIVER,
        tmp / "loadtest.json",
        sandbox="django_sandbox:messages",
        rate=10,
        env=env,
        django_settings=WORKER_SETTINGS,
    )


def _async_pass(
    tree: AppTree, queue: Runtime, expected: Counter[str], home: Path, kill: bool
) -> None:
    home.mkdir()
    outbox = Outbox(home / "outbox.jsonl")
    killed_file = home / "killed-pid"
    env = {
        **os.environ,
        **_app_env(tree, outbox.path, "worker"),
        **queue_env(queue),
        "REALAPP_JOB_MODULES": "tellme.mail",
        "PATH": f"{tree.python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    before = succeeded(queue, DELIVER)
    workers = app_workers(tree, home, "django_worker", env)
    try:
        workers.start(queue.settings)
        workers.start(queue.settings)
        suite_env = {
            **_app_env(tree, outbox.path, "suite"),
            **queue_env(queue),
            "QUEUE_RUNTIME_MODE": "queue",
            "REALAPP_PYTEST_ARGS": "-p django_outbox -p django_bridge",
            **({"REALAPP_KILL_FIRST_SENDER": str(killed_file)} if kill else {}),
        }
        counts = run_suite(tree, suite_env)
        assert counts == SUITE, workers.logs()
    finally:
        workers.stop_all()
    mails = outbox.mails()
    by_worker = [m for m in mails if m["process"] == "worker"]
    # the same mails as inline, each once, every one sent by a worker
    assert Counter(_mail_key(m) for m in mails) == expected
    assert len(by_worker) == len(mails) == MAILS == succeeded(queue, DELIVER) - before
    assert len({m["message_id"] for m in by_worker}) == MAILS
    assert all(_built_in_the_request(m) for m in by_worker), by_worker
    if kill:  # the first mail's worker was SIGKILLed after it; the other sent the rest
        pid = int(killed_file.read_text())
        victim = next(p for p in workers.procs if p.pid == pid)
        assert victim.returncode == -9
        assert by_worker[0]["pid"] == pid and {m["pid"] for m in by_worker[1:]} - {pid}
