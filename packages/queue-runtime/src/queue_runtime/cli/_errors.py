"""How ``queue-runtime`` reports a failure: one line on stderr, an exit code, no traceback.

Every operational error reaches the command line as a :class:`QueueError`
(psycopg, redis, OSError and import errors are translated where they happen);
``report`` turns it into ``error: <what failed>; check <what to check>`` and
the exit code of its kind. ``--debug`` adds the traceback.

Exit codes: 0 success; 1 the command failed (an unknown job id, a job not in
the DLQ); 2 usage or configuration (bad flags, a malformed URL, a Redis
database the server does not have, an unknown pool, an app module that does
not import, a busy port); 3 PostgreSQL (not reachable, no such database,
schema not migrated); 4 Redis (not reachable); 141 the reader of the output
closed it (``| head``), with nothing printed.
"""

from __future__ import annotations

import sys
import traceback
from enum import IntEnum
from typing import TextIO

from queue_runtime.errors import (
    AppImportFailed,
    AppNotImportable,
    BadDatabaseUrl,
    BadRedisUrl,
    ConfigError,
    DatabaseMissing,
    LeasesUnavailable,
    NotConfigured,
    PortInUse,
    QueueError,
    SchemaNotMigrated,
    StoreError,
    StoreUnavailable,
)


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    DATABASE = 3
    REDIS = 4
    PIPE_CLOSED = 141  # the reader of stdout went away (`| head`): a shell's code for SIGPIPE


_DB_FLAGS = "--database-url / QUEUE_RUNTIME_DATABASE_URL"
_REDIS_FLAGS = "--redis-url / QUEUE_RUNTIME_REDIS_URL"
# Most specific first: the first class the error is an instance of gives its code and hint.
_KINDS: tuple[tuple[type[QueueError], ExitCode, str], ...] = (
    (BadDatabaseUrl, ExitCode.USAGE, f"check {_DB_FLAGS}"),
    (BadRedisUrl, ExitCode.USAGE, f"check {_REDIS_FLAGS}"),
    (NotConfigured, ExitCode.USAGE, f"check {_DB_FLAGS} and {_REDIS_FLAGS}"),
    (
        AppImportFailed,
        ExitCode.USAGE,
        "check that module's code (--debug shows the traceback)",
    ),
    (
        AppNotImportable,
        ExitCode.USAGE,
        "check the module name, the current directory and PYTHONPATH",
    ),
    (PortInUse, ExitCode.USAGE, "check --metrics-port: choose a free port or stop what holds it"),
    (ConfigError, ExitCode.USAGE, "check the flags, [tool.queue_runtime] and QUEUE_RUNTIME_*"),
    (DatabaseMissing, ExitCode.DATABASE, f"check the database name in {_DB_FLAGS}, or create it"),
    (SchemaNotMigrated, ExitCode.DATABASE, "check --schema (the schema the queue was migrated in)"),
    (
        StoreUnavailable,
        ExitCode.DATABASE,
        f"check {_DB_FLAGS} (host, port, user) and that PostgreSQL is running",
    ),
    (StoreError, ExitCode.DATABASE, f"check {_DB_FLAGS} and the PostgreSQL server log"),
    (LeasesUnavailable, ExitCode.REDIS, f"check {_REDIS_FLAGS} and that Redis is running"),
)


def exit_code(exc: QueueError) -> ExitCode:
    return next((code for kind, code, _ in _KINDS if isinstance(exc, kind)), ExitCode.FAILED)


def one_line(exc: QueueError) -> str:
    """``error: <message>; <what to check>``, whitespace (psycopg's tabs and newlines) folded."""
    message = " ".join(str(exc).split())
    hint = next((hint for kind, _, hint in _KINDS if isinstance(exc, kind)), "")
    return f"error: {message}" + (f"; {hint}" if hint and hint not in message else "")


def report(exc: QueueError, debug: bool = False, stream: TextIO | None = None) -> int:
    """Print ``exc`` (one line; with ``debug`` the traceback before it) and return its code."""
    out = stream or sys.stderr
    if debug:
        traceback.print_exception(exc, file=out)
    print(one_line(exc), file=out)
    return int(exit_code(exc))
