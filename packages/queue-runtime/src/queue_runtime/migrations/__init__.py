"""Schema migrations (alembic), usable from Python and the CLI.

``migrate(settings)`` upgrades the configured schema to head;
``downgrade(settings, "base")`` removes it. The alembic scripts ship as package
data, so this works from an installed wheel too. alembic and SQLAlchemy are
imported only when a migration runs: an app importing queue_runtime does not
pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from queue_runtime.config import Settings
from queue_runtime.errors import NotConfigured

if TYPE_CHECKING:
    from alembic.config import Config

HEAD = "head"


def alembic_config(settings: Settings) -> Config:
    from alembic.config import Config

    if not settings.database_url:
        raise NotConfigured()
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    config.attributes["url"] = settings.database_url
    config.attributes["schema"] = settings.schema_name
    return config


def migrate(settings: Settings, revision: str = HEAD) -> None:
    """Upgrade the schema ``settings.schema_name`` to ``revision`` (default: head)."""
    from alembic import command

    command.upgrade(alembic_config(settings), revision)


def downgrade(settings: Settings, revision: str) -> None:
    """Downgrade to ``revision`` ("base" drops every queue table)."""
    from alembic import command

    command.downgrade(alembic_config(settings), revision)


def current_revision(settings: Settings) -> str | None:
    """The revision the schema is at, or None when never migrated."""
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine, pool

    from queue_runtime.migrations.naming import sqlalchemy_url

    if not settings.database_url:
        raise NotConfigured()
    engine = create_engine(sqlalchemy_url(settings.database_url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            opts = {"version_table_schema": settings.schema_name}
            return MigrationContext.configure(conn, opts=opts).get_current_revision()
    finally:
        engine.dispose()
