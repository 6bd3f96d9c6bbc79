"""``queue-runtime jobs``, ``show ID`` and ``workers``: read the queue through the Inspector.

Plain aligned text for people, ``--json`` for machines; each command is one
Inspector call (``list_jobs``, ``job_detail``, ``workers``) and its rendering.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from queue_runtime.store import (
    KEPT_ATTEMPTS,
    JobDetail,
    JobPage,
    JobQuery,
    JobStatus,
    WorkerInfo,
)

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

RuntimeFor = Callable[[argparse.Namespace], "Runtime"]


def add_parsers(sub: Any, runtime: RuntimeFor) -> None:
    """The ``jobs``, ``show`` and ``workers`` subcommands; ``runtime`` builds one from the flags."""
    jobs = sub.add_parser("jobs", help="list jobs, newest first (keyset-paginated: --after)")
    jobs.add_argument(
        "--state", type=_state, metavar="STATE", help="one of: " + ", ".join(JobStatus)
    )
    jobs.add_argument("--job", metavar="NAME", help="only jobs with this name")
    jobs.add_argument("--pool", help="only jobs of this pool")
    jobs.add_argument("--after", type=int, metavar="ID", help="the page after this id")
    jobs.add_argument("--limit", type=_positive, default=50)
    jobs.add_argument("--json", action="store_true")
    jobs.set_defaults(command=lambda args: cmd_jobs(runtime(args), args))
    show = sub.add_parser("show", help="one job: args, state, attempts, errors, timings")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true")
    show.set_defaults(command=lambda args: cmd_show(runtime(args), args))
    workers = sub.add_parser("workers", help="live workers, from their heartbeats (Redis)")
    workers.add_argument("--json", action="store_true")
    workers.set_defaults(command=lambda args: cmd_workers(runtime(args), args))


def _state(text: str) -> JobStatus:
    try:
        return JobStatus(text)
    except ValueError:
        valid = ", ".join(JobStatus)
        raise argparse.ArgumentTypeError(f"no state {text!r}; the states: {valid}") from None


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


# -- commands --------------------------------------------------------------------


def cmd_jobs(runtime: Runtime, args: argparse.Namespace) -> int:
    query = JobQuery(args.state, args.job, args.pool, args.after, args.limit)
    page = runtime.inspector.list_jobs(query)
    print(json.dumps(page_json(page), indent=2) if args.json else render_page(page))
    return 0


def cmd_show(runtime: Runtime, args: argparse.Namespace) -> int:
    return show_job(runtime, args.id, args.json)


def show_job(runtime: Runtime, job_id: int, as_json: bool) -> int:
    """``show ID`` and ``dlq show ID``: 1 (and one line on stderr) for an unknown id."""
    detail = runtime.inspector.job_detail(job_id)
    if detail is None:
        print(f"error: no job {job_id} (unknown, or purged)", file=sys.stderr)
        return 1
    print(json.dumps(detail_json(detail), indent=2) if as_json else render_detail(detail))
    return 0


def cmd_workers(runtime: Runtime, args: argparse.Namespace) -> int:
    found = runtime.inspector.workers()
    print(json.dumps([plain(w) for w in found], indent=2) if args.json else render_workers(found))
    return 0


# -- rendering -------------------------------------------------------------------

JOBS_COLUMNS = ("id", "name", "pool", "state", "attempts", "enqueued", "finished", "error")
WORKER_COLUMNS = ("worker", "host", "pid", "pools", "running", "started", "last beat")


def render_page(page: JobPage) -> str:
    rows = [
        (
            j.id,
            j.name,
            j.pool,
            j.status.value,
            f"{j.attempt}/{j.max_attempts}",
            when(j.enqueued_at),
            when(j.finished_at),
            short(j.error or ""),
        )
        for j in page.jobs
    ]
    if not rows:
        return "no jobs match"
    more = f"\nmore: --after {page.next_after}" if page.next_after is not None else ""
    return text_table(JOBS_COLUMNS, rows) + more


def render_detail(d: JobDetail) -> str:
    ran = run_seconds(d)
    fields = [
        ("job", f"{d.id} {d.name}"),
        ("pool", d.pool),
        ("state", d.status.value),
        ("attempts", f"{d.attempt} of {d.max_attempts}"),
        ("priority", d.priority),
        ("enqueued", when(d.enqueued_at)),
        ("due", when(d.run_at)),
        ("started", when(d.started_at)),
        ("finished", when(d.finished_at)),
        ("run time", f"{ran:.3f}s" if ran is not None else "-"),
        ("worker", d.worker or "-"),
        ("tenant", d.tenant or "-"),
        ("idempotency key", d.idempotency_key or "-"),
        ("args", json.dumps(d.args, sort_keys=True)),
        ("result", json.dumps(d.result) if d.result is not None else "-"),
    ]
    width = max(len(name) for name, _ in fields)
    lines = [f"{name.ljust(width)}  {value}" for name, value in fields]
    if attempts_cut(d):
        lines += ["", f"(only the last {KEPT_ATTEMPTS} failed attempts are kept)"]
    for e in d.errors:
        worker = f" on {e.worker}" if e.worker else ""
        took = _between(e.started_at, e.at)
        ran_for = f" after {took:.3f}s" if took is not None else ""
        lines += ["", f"attempt {e.attempt} failed at {when(e.at)}{ran_for}{worker}:"]
        lines += [f"  {e.error}", *(f"  {ln}" for ln in (e.traceback or "").rstrip().splitlines())]
    if d.traceback and not any(e.traceback for e in d.errors):
        lines += ["", "traceback:", *(f"  {ln}" for ln in d.traceback.rstrip().splitlines())]
    return "\n".join(lines)


def render_workers(found: Sequence[WorkerInfo]) -> str:
    now = datetime.now(UTC)
    rows = [
        (
            w.id,
            w.host,
            w.pid,
            ",".join(w.pools),
            w.running,
            when(w.started_at),
            f"{max(0.0, (now - w.seen_at).total_seconds()):.0f}s ago",
        )
        for w in found
    ]
    return text_table(WORKER_COLUMNS, rows) if rows else "no live workers"


def run_seconds(d: JobDetail) -> float | None:
    """How long the attempt that finished the job ran (None while unfinished or unknown)."""
    return _between(d.started_at, d.finished_at)


def attempts_cut(d: JobDetail) -> bool:
    """Whether earlier failed attempts were dropped (the history keeps KEPT_ATTEMPTS)."""
    return len(d.errors) >= KEPT_ATTEMPTS and d.errors[0].attempt > 1


def _between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


def detail_json(d: JobDetail) -> dict[str, Any]:
    """``show --json``: the JobDetail's fields, its run time and whether attempts were cut."""
    data: dict[str, Any] = plain(d)
    data["run_seconds"] = run_seconds(d)
    data["attempts_cut"] = attempts_cut(d)
    for entry, e in zip(data["errors"], d.errors, strict=True):
        entry["run_seconds"] = _between(e.started_at, e.at)
    return data


def page_json(page: JobPage) -> dict[str, Any]:
    return {"jobs": [plain(j) for j in page.jobs], "next_after": page.next_after}


def plain(record: Any) -> Any:
    """A record as JSON-ready data: datetimes in ISO 8601, enums as their values."""
    data: Any = json.loads(json.dumps(asdict(record), default=_json_default))
    return data


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table (no rich in the runtime)."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


def short(text: str, width: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value is not None else "-"
