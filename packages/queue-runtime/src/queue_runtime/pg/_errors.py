"""psycopg's errors as the runtime's own, at the edge of the pg package.

Lost, refused or terminated connections, pool timeouts, and what the in-place
retry (:mod:`queue_runtime.pg.retry`) treats as transient once its attempts are
spent (a deadlock, a serialization failure) are :class:`StoreUnavailable`: the
caller may try again later (the worker does). A missing table is
:class:`SchemaNotMigrated`. Everything else is :class:`StoreError`. The message keeps the psycopg class
name (``PoolTimeout: ...``) and the original is the ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg_pool import PoolTimeout

from queue_runtime.errors import SchemaNotMigrated, StoreError, StoreUnavailable
from queue_runtime.pg.retry import TRANSIENT_ERRORS

_UNAVAILABLE: tuple[type[BaseException], ...] = (PoolTimeout, *TRANSIENT_ERRORS)


def translate(exc: psycopg.Error, schema: str | None = None) -> StoreError:
    """The runtime's error for ``exc`` (raise it ``from exc``)."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, psycopg.errors.UndefinedTable):
        where = f" in schema {schema!r}" if schema else ""
        return SchemaNotMigrated(f"missing tables{where}: {detail}")
    if isinstance(exc, _UNAVAILABLE) or _connection_lost(exc):
        return StoreUnavailable(detail)
    return StoreError(detail)


def _connection_lost(exc: psycopg.Error) -> bool:
    # An OperationalError without a SQLSTATE never reached the server (refused, reset);
    # class 08 is a connection exception, 57P0x an admin shutdown or terminated backend.
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate or ""
    return not state or state.startswith(("08", "57P"))


@contextmanager
def translated(schema: str | None = None) -> Iterator[None]:
    """Within the block, psycopg errors become the runtime's (see :func:`translate`)."""
    try:
        yield
    except psycopg.Error as exc:
        raise translate(exc, schema) from exc
