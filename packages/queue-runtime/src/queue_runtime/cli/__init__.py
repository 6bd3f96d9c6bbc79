"""``queue-runtime``: migrate, run a worker, show the queue, manage the dead-letter queue.

Standard library only (argparse): a migrated app installs queue_runtime alone.
Every command is a thin shell over one library call; configuration comes from
the usual sources (``[tool.queue_runtime]`` in pyproject.toml, the
``QUEUE_RUNTIME_*`` environment, then ``--database-url`` / ``--schema`` ...).

Failures are one line on stderr and an exit code (``queue_runtime.cli._errors``):
0 success, 1 a command-level failure (e.g. an unknown job id), 2 usage or
configuration, 3 PostgreSQL, 4 Redis; ``--debug`` adds the traceback. Commands
that read the database first connect once with a short timeout
(``pg.connect.probe``), so a wrong port or host fails in about two seconds.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, NoReturn

from queue_runtime.cli import _inspect as cli_inspect
from queue_runtime.cli import _ops as cli_ops
from queue_runtime.cli._errors import ExitCode, report
from queue_runtime.cli._inspect import text_table
from queue_runtime.errors import (
    AppImportFailed,
    AppNotImportable,
    PortInUse,
    QueueError,
)
from queue_runtime.store import JobRecord, JobStore, PoolStats
from queue_runtime.web import command as dashboard

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime
    from queue_runtime.worker._periodic import NextRun

Command = Callable[[argparse.Namespace], int]


__all__ = ["ExitCode", "main", "render_status"]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    try:
        if args.probe:  # the worker probes itself, once its app module has configured it
            _probe_database(args)
        code = int(args.command(args))
        sys.stdout.flush()  # here, where a closed pipe is caught, not at interpreter exit
        return code
    except QueueError as exc:
        return report(exc, debug=args.debug)
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """``queue-runtime dlq list | head``: the reader closed the pipe; stop quietly.

    Later writes (the interpreter's final flush) go to /dev/null instead of raising
    again; the code is a shell's for a process that SIGPIPE ended (128 + 13).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return int(ExitCode.PIPE_CLOSED)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, as every other failure (and exit 2, as argparse)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}; check {self.prog} --help\n")


def _probe_database(args: argparse.Namespace) -> None:
    """Fail at once, in one line, when PostgreSQL is misconfigured or unreachable."""
    from queue_runtime._settings_load import load_settings
    from queue_runtime.pg.connect import probe

    probe(load_settings(**_overrides(args)))


# -- commands --------------------------------------------------------------
def cmd_migrate(args: argparse.Namespace) -> int:
    from queue_runtime import migrate

    runtime = _runtime(args)
    migrate(runtime.settings)
    print(f"schema {runtime.settings.schema_name} is at head")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from queue_runtime.worker import Worker

    framework = _set_up_framework(args)  # before the app module: its imports may need it
    _import_app(args.app)  # registers its @job functions; it may call configure()
    runtime = _runtime(args, keep_app_config=True, **framework)
    worker = Worker(runtime, args.pool or None, args.concurrency)
    worker.check()  # fail fast, before the metrics port: a worker without Redis would only idle
    if args.metrics_port is not None:
        _serve_metrics(worker, args.metrics_port)
    worker.run(install_signals=True)
    return 0


def _serve_metrics(worker: Any, port: int) -> None:
    try:
        worker.metrics.serve(port)
    except OSError as exc:
        raise PortInUse(f"--metrics-port {port}: {exc.strerror or exc}") from exc


def cmd_status(args: argparse.Namespace) -> int:
    from queue_runtime.worker._periodic import next_runs

    if args.app:
        _import_app(args.app)  # its @job(every=/cron=) declarations
    runtime = _runtime(args)
    stats = runtime.store.stats()
    # Only the --app module's declarations: jobs registered in this process by anything
    # else (a test session, an embedding program) are not the deployment's schedule.
    runs = next_runs(runtime) if args.app else []
    if args.json:
        print(json.dumps(status_json(runtime, stats, runs), indent=2))
    else:
        print(render_status(stats))
        if runs:
            print("\n" + _table(PERIODIC_COLUMNS, [_next_run_row(r) for r in runs]))
    return 0


PERIODIC_COLUMNS = ("periodic job", "schedule", "next run (UTC)")


def _next_run_row(run: NextRun) -> tuple[object, ...]:
    return (run.name, run.schedule.describe(), run.at.strftime("%Y-%m-%d %H:%M:%S"))


def status_json(
    runtime: Runtime, stats: Sequence[PoolStats], runs: Sequence[NextRun]
) -> list[dict[str, object]]:
    """One object per pool (the text table's row), with its periodic jobs' next runs (UTC)."""
    by_pool: dict[str, list[dict[str, str]]] = {}
    for run in runs:
        entry = {
            "job": run.name,
            "schedule": run.schedule.describe(),
            "next_run": run.at.isoformat(),
        }
        by_pool.setdefault(_periodic_pool(runtime, run.name), []).append(entry)
    return [{**asdict(s), "periodic": by_pool.get(s.pool, [])} for s in stats]


def _periodic_pool(runtime: Runtime, name: str) -> str:
    """The pool a periodic job ticks in: its spec, or for one only configured, its config."""
    if name in runtime.registry.names():
        return runtime.spec(runtime.registry.definition(name)).pool
    configured = runtime.settings.jobs.get(name)
    return (configured.pool if configured else None) or runtime.settings.default_pool


def _import_app(app: str) -> None:
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # console scripts do not put the cwd on sys.path
    try:
        importlib.import_module(app)
    except ModuleNotFoundError as exc:
        where = f"cwd {os.getcwd()}"
        missing = exc.name or app
        what = f"no module named {missing!r}" + (f" (imported by {app})" if missing != app else "")
        raise AppNotImportable(f"{app}: {what}; searched {where} and sys.path") from exc
    except QueueError:
        raise  # the app's own configure() failed: its message says why
    except Exception as exc:  # the app's own code failed at import: one line that says where
        raise AppImportFailed(f"{app}: {type(exc).__name__}: {exc} ({_raised_at(exc)})") from exc


def _raised_at(exc: BaseException) -> str:
    """``raised at path:line``: the innermost frame, the line that raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "no traceback"
    where = frames[-1]
    path = where.filename
    relative = os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
    return f"raised at {relative}:{where.lineno}"


def cmd_dlq_list(args: argparse.Namespace) -> int:
    records = _runtime(args).store.dead_letters(limit=args.limit, name=args.name)
    if args.json:
        print(json.dumps([_record_json(r) for r in records], indent=2))
    else:
        print(render_dead(records))
    return 0


def cmd_dlq_show(args: argparse.Namespace) -> int:
    """The job as ``show`` prints it: arguments, attempts, the stored traceback."""
    return cli_inspect.show_job(_runtime(args), args.id, args.json)


def cmd_dlq_replay(args: argparse.Namespace) -> int:
    store = _runtime(args).store
    ids = _ids_or_all(args, store)
    new_ids = store.replay(ids) if ids else []
    print(f"{len(new_ids)} job(s) replayed" + (f" as {_join(new_ids)}" if new_ids else ""))
    missing = len(ids) - len(new_ids)
    if missing:
        print(f"error: {missing} of the given id(s) are not in the DLQ", file=sys.stderr)
        return 1
    return 0


def _join(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:20])) + (", ..." if len(ids) > 20 else "")


def cmd_dlq_purge(args: argparse.Namespace) -> int:
    store = _runtime(args).store
    purged = store.purge_dead(None if args.all else args.ids)
    print(f"{purged} dead job(s) purged")
    return 0


# -- rendering -------------------------------------------------------------
STATUS_COLUMNS = ("pool", "depth", "scheduled", "lag", "throughput/min", "running", "dlq")


def render_status(stats: list[PoolStats]) -> str:
    """A plain aligned text table, one row per pool."""
    rows = [
        (
            s.pool,
            s.depth,
            s.scheduled,
            f"{s.lag_seconds:.1f}s",
            s.succeeded_last_minute,
            s.running,
            s.dead,
        )
        for s in stats
    ]
    return _table(STATUS_COLUMNS, rows) if rows else "no pools have jobs"


def render_dead(records: list[JobRecord]) -> str:
    rows = [
        (r.id, r.name, r.pool, r.attempt, _short(r.error or ""), _when(r.finished_at))
        for r in records
    ]
    headers = ("id", "name", "pool", "attempts", "error", "finished")
    return _table(headers, rows) if rows else "the dead-letter queue is empty"


_table = text_table


def _short(text: str, width: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _when(value: Any) -> str:
    return value.isoformat(timespec="seconds") if value is not None else "-"


def _record_json(record: JobRecord) -> dict[str, Any]:
    data = asdict(record)
    for key in ("enqueued_at", "finished_at"):
        data[key] = _when(data[key]) if data[key] is not None else None
    plain: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return plain


def _ids_or_all(args: argparse.Namespace, store: JobStore) -> list[int]:
    if not args.all:
        return list(args.ids)
    # --all: every dead job id (one listing; the DLQ is expected to stay small).
    return [r.id for r in store.dead_letters(limit=1_000_000)]


# -- wiring ----------------------------------------------------------------
_FRAMEWORK_FIELDS = ("django_settings", "flask_app", "server_name", "url_scheme")


def _set_up_framework(args: argparse.Namespace) -> dict[str, Any]:
    """Set up the app's framework (flags, else the config sources); its Settings fields.

    The fields go into the worker's Runtime, whatever the app module configures, so
    each job runs in the scope of the framework set up here.
    """
    from queue_runtime._settings_load import load_settings
    from queue_runtime.bootstrap import bootstrap

    flags = {f: vars(args)[f] for f in _FRAMEWORK_FIELDS if vars(args)[f] is not None}
    settings = load_settings(**flags)
    bootstrap(settings)
    found = settings.model_dump(include=set(_FRAMEWORK_FIELDS), exclude_none=True)
    return dict(found)


def _runtime(args: argparse.Namespace, keep_app_config: bool = False, **extra: Any) -> Runtime:
    """The Runtime from the config sources plus flag overrides.

    ``keep_app_config`` (the worker command): start from the Runtime the app
    module configured when it imported, and only override the flags given
    (and ``extra``: the framework the worker set up).
    """
    from queue_runtime import configure
    from queue_runtime.runtime import configured

    overrides = _overrides(args) | extra
    app_runtime = configured() if keep_app_config else None
    if app_runtime is not None:
        return configure(app_runtime.settings, **overrides) if overrides else app_runtime
    return configure(**overrides)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The Settings fields the global flags give."""
    return {
        key: value
        for key, value in (
            ("database_url", args.database_url),
            ("redis_url", args.redis_url),
            ("schema_name", args.schema),
            ("redis_prefix", args.redis_prefix),
        )
        if value is not None
    }


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"queue-runtime {version('queue-runtime')}"
    except PackageNotFoundError:
        return "queue-runtime (not installed as a distribution)"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="queue-runtime",
        description="Migrate, run a worker, show the queue, manage the dead-letter queue.",
    )
    parser.add_argument("--database-url", help="overrides QUEUE_RUNTIME_DATABASE_URL")
    parser.add_argument("--redis-url", help="overrides QUEUE_RUNTIME_REDIS_URL")
    parser.add_argument("--schema", help="PostgreSQL schema of the queue")
    parser.add_argument("--redis-prefix", help="prefix of the Redis keys")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of a failure")
    parser.add_argument("--version", action="version", version=_version())
    parser.set_defaults(probe=True)
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    sub.add_parser("migrate", help="create or upgrade the queue schema").set_defaults(
        command=cmd_migrate
    )
    _worker_parser(sub)
    status = sub.add_parser(
        "status", help="per pool: depth, scheduled, lag, throughput, running, DLQ"
    )
    status.add_argument("--json", action="store_true")
    status.add_argument(
        "--app", metavar="APP_MODULE", help="import it to show its periodic jobs' next runs"
    )
    status.set_defaults(command=cmd_status)
    _dlq_parser(sub)
    cli_inspect.add_parsers(sub, _runtime)
    cli_ops.add_parsers(sub, _runtime)  # cancel, pause, resume; status shows paused pools
    dashboard.add_parser(sub, _runtime, _import_app)  # the web dashboard (queue-runtime[web])
    return parser


def _worker_parser(sub: Any) -> None:
    worker = sub.add_parser("worker", help="run a worker for APP_MODULE's jobs")
    worker.add_argument("app", metavar="APP_MODULE", help="module defining the @job functions")
    worker.add_argument("--pool", action="append", help="pool to serve (repeatable; default: all)")
    worker.add_argument(
        "--concurrency", type=int, help="concurrent jobs per pool (overrides config)"
    )
    worker.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    context = worker.add_argument_group(
        "framework context", "set up before APP_MODULE is imported; each job runs in its scope"
    )
    context.add_argument(
        "--django-settings", metavar="MODULE", help="Django settings module (django.setup())"
    )
    context.add_argument(
        "--flask-app", metavar="MODULE:APP", help="Flask app or factory (an app context per job)"
    )
    context.add_argument("--server-name", help="Flask SERVER_NAME, so url_for builds real links")
    context.add_argument("--url-scheme", choices=["http", "https"], help="PREFERRED_URL_SCHEME")
    worker.set_defaults(command=cmd_worker, probe=False)


def _dlq_parser(sub: Any) -> None:
    dlq = sub.add_parser("dlq", help="inspect, replay or purge dead jobs").add_subparsers(
        required=True, metavar="ACTION"
    )
    listing = dlq.add_parser("list", help="dead jobs, newest first")
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--name", help="only jobs with this name")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(command=cmd_dlq_list)
    show = dlq.add_parser("show", help="one job with its attempt history and stored traceback")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true")
    show.set_defaults(command=cmd_dlq_show)
    for action, command in (("replay", cmd_dlq_replay), ("purge", cmd_dlq_purge)):
        p = dlq.add_parser(action, help=f"{action} dead jobs by id, or --all")
        p.add_argument("ids", type=int, nargs="*", metavar="ID")
        p.add_argument("--all", action="store_true", help="every dead job")
        p.set_defaults(command=_needs_ids(command))


def _needs_ids(command: Command) -> Command:
    def checked(args: argparse.Namespace) -> int:
        if bool(args.ids) == bool(args.all):
            print("error: give job ids or --all (not both)", file=sys.stderr)
            return 2
        return command(args)

    return checked
