"""queue_runtime: the PostgreSQL + Redis job queue migrated apps import."""
