"""The schema name the migrations run in, validated before it reaches DDL.

DDL cannot take bind parameters, so the name is checked against a strict
pattern and then double-quoted; anything else is refused.
"""

from __future__ import annotations

import re

from alembic import context

_SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def checked(schema: str) -> str:
    if not _SAFE.match(schema):
        raise ValueError(
            f"unsafe PostgreSQL schema name {schema!r}: use letters, digits, underscore"
        )
    return schema


def current_schema() -> str:
    """The schema given to this alembic run (config attribute, else ``-x schema=``)."""
    schema = context.config.attributes.get("schema") or context.get_x_argument(
        as_dictionary=True
    ).get("schema")
    return checked(schema or "queue_runtime")


def schema_ident() -> str:
    return f'"{current_schema()}"'


def sqlalchemy_url(url: str) -> str:
    """SQLAlchemy needs the driver spelled out; we only ship psycopg 3."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
