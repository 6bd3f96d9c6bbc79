"""Alembic environment: one schema per queue, its own ``alembic_version`` inside it.

The database URL and schema come from config attributes set by
:func:`queue_runtime.migrate` (or ``-x url=... -x schema=...`` on the alembic
command line). Each schema keeps its version table, so several queues (and
test schemas) migrate independently in one database.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

from queue_runtime.migrations.naming import current_schema, sqlalchemy_url


def _url() -> str:
    url = context.config.attributes.get("url") or context.get_x_argument(as_dictionary=True).get(
        "url"
    )
    if not url:
        raise RuntimeError(
            "no database URL: pass -x url=postgresql://... or use queue_runtime.migrate()"
        )
    return sqlalchemy_url(url)


def run_migrations_online() -> None:
    schema = current_schema()
    engine = create_engine(_url(), poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            connection.commit()
            context.configure(
                connection=connection,
                version_table_schema=schema,
                transactional_ddl=True,
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError(
        "offline (SQL script) mode is not supported: the schema name is runtime data"
    )
run_migrations_online()
