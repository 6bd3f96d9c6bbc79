"""``queue-runtime cancel ID...``, ``pause POOL``, ``resume POOL``: operator controls.

Each is one job-store call per argument (``cancel_job``, ``pause``,
``resume``) and one line of output per argument. ``status`` gains a line
naming the paused pools (``--json``: each pool's ``paused``).

Exit codes: 0 when every id was cancelled or its cancel requested, and for
pause / resume (also when already paused / not paused); 1 when an id was
already finished or unknown, or the pool is not configured.
"""

from __future__ import annotations

import argparse
import getpass
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from queue_runtime.store import Cancellation, JobStore

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

RuntimeFor = Callable[[argparse.Namespace], "Runtime"]
Command = Callable[[argparse.Namespace], int]


def add_parsers(sub: Any, runtime: RuntimeFor | None = None) -> None:
    """The ``cancel``, ``pause`` and ``resume`` subcommands; ``status`` shows paused pools.

    ``runtime`` builds the Runtime from the parsed flags (default: the config sources
    plus ``--database-url``, ``--redis-url``, ``--schema``, ``--redis-prefix``).
    """
    build = runtime or _runtime
    cancel = sub.add_parser(
        "cancel", help="cancel jobs: queued and scheduled never run, running ones are asked to stop"
    )
    cancel.add_argument("ids", type=int, nargs="+", metavar="ID")
    cancel.set_defaults(command=lambda args: cmd_cancel(build(args).store, args.ids))
    pause = sub.add_parser(
        "pause", help="stop every worker claiming from POOL (running jobs go on)"
    )
    pause.add_argument("pool", metavar="POOL")
    pause.set_defaults(command=lambda args: cmd_pause(build(args), args.pool))
    resume = sub.add_parser("resume", help="let workers claim from a paused POOL again")
    resume.add_argument("pool", metavar="POOL")
    resume.set_defaults(command=lambda args: cmd_resume(build(args), args.pool))
    status = sub.choices.get("status") if hasattr(sub, "choices") else None
    if status is not None and status.get_default("command") is not None:
        status.set_defaults(command=_with_paused(status.get_default("command"), build))


# -- commands --------------------------------------------------------------------


def cmd_cancel(store: JobStore, ids: list[int]) -> int:
    """One line per id; 1 when any was already finished or unknown."""
    failed = False
    for job_id in ids:
        line, ok = cancel_line(store, job_id)
        print(line, file=sys.stdout if ok else sys.stderr)
        failed = failed or not ok
    return 1 if failed else 0


def cancel_line(store: JobStore, job_id: int) -> tuple[str, bool]:
    answer = store.cancel_job(job_id, operator())
    if answer is Cancellation.CANCELLED:
        return f"job {job_id}: cancelled (it will not run)", True
    if answer is Cancellation.REQUESTED:
        return (
            f"job {job_id}: cancel requested (running: it stops if it checks its context, "
            "else it finishes)",
            True,
        )
    if answer is Cancellation.FINISHED:
        record = store.get(job_id)
        state = f" ({record.status})" if record is not None else ""
        return f"error: job {job_id}: already finished{state}, nothing to cancel", False
    return f"error: job {job_id}: unknown id", False


def cmd_pause(runtime: Runtime, pool: str) -> int:
    if not _known(runtime, pool):
        return 2  # a configuration error, as `worker --pool nope` (_errors.ExitCode.USAGE)
    if runtime.store.pause(pool, operator()):
        print(f"pool {pool} paused: workers stop claiming from it within 1 s; running jobs go on")
    else:
        print(f"pool {pool} was already paused")
    return 0


def cmd_resume(runtime: Runtime, pool: str) -> int:
    if not _known(runtime, pool):
        return 2  # a configuration error, as `worker --pool nope` (_errors.ExitCode.USAGE)
    if runtime.store.resume(pool):
        print(f"pool {pool} resumed: workers claim from it again within 1 s")
    else:
        print(f"pool {pool} was not paused")
    return 0


def _known(runtime: Runtime, pool: str) -> bool:
    pools = sorted(runtime.settings.pools)
    if pool in pools:
        return True
    print(f"error: unknown pool {pool!r}; configured pools: {', '.join(pools)}", file=sys.stderr)
    return False


def _with_paused(status: Command, runtime: RuntimeFor) -> Command:
    """``status`` as it is, then (text output) one line naming the paused pools."""

    def command(args: argparse.Namespace) -> int:
        from queue_runtime.runtime import configured

        code = status(args)
        if code == 0 and not getattr(args, "json", False):
            line = paused_line((configured() or runtime(args)).store)  # status's own Runtime
            if line:
                print(line)
        return code

    return command


def paused_line(store: JobStore) -> str:
    paused = [s.pool for s in store.stats() if s.paused]
    if not paused:
        return ""
    return f"paused: {', '.join(paused)} (no worker claims from it; `queue-runtime resume POOL`)"


def operator() -> str:
    """Who asked: ``user@host``, stored with a pause or a cancel request."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name in some containers
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def _runtime(args: argparse.Namespace) -> Runtime:
    from queue_runtime.runtime import configure

    flags = (
        ("database_url", "database_url"),
        ("redis_url", "redis_url"),
        ("schema", "schema_name"),
        ("redis_prefix", "redis_prefix"),
    )
    overrides = {
        field: getattr(args, flag) for flag, field in flags if getattr(args, flag, None) is not None
    }
    return configure(**overrides)
