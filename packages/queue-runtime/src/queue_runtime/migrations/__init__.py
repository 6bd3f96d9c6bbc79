"""Schema migrations (alembic), usable from Python and the CLI.

``migrate(settings)`` upgrades the configured schema to head;
``downgrade(settings, "base")`` removes it. The alembic scripts ship as package
data, so this works from an installed wheel too. alembic and SQLAlchemy are
imported only when a migration runs: an app importing queue_runtime does not
pay for them.
"""

from __future__ import annotations

import logging
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


def revisions() -> list[str]:
    """Every revision shipped with this queue_runtime, oldest first (the last is the head)."""
    quiet = logging.getLogger("alembic")  # its plugins log at INFO when first imported:
    level = quiet.level  # a worker's start-up would print them before its own lines
    quiet.setLevel(logging.WARNING)
    try:
        from alembic.script import ScriptDirectory

        script = ScriptDirectory(str(Path(__file__).parent))
        return [rev.revision for rev in reversed(list(script.walk_revisions()))]
    finally:
        quiet.setLevel(level)


def behind(stored: list[str] | None) -> str | None:
    """Why a schema at ``stored`` (its ``alembic_version`` rows; None: no such table) is too
    old for this code, or None when it is at the head or at a revision this code does not
    ship (migrated by a newer release during a rolling deploy: old workers keep working)."""
    shipped = revisions()
    if stored is None or not stored:
        return "not migrated (no alembic_version)"
    known = [rev for rev in stored if rev in shipped]
    if len(known) < len(stored) or shipped[-1] in known:
        return None
    return f"at {', '.join(stored)}, this queue_runtime needs {shipped[-1]}"


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
