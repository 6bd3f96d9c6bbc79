"""The PostgreSQL implementation of the JobStore seam."""

from queue_runtime.pg.store import PgJobStore

__all__ = ["PgJobStore"]
