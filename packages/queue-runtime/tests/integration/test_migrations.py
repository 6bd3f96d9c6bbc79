"""Migrations produce exactly the schema the code expects, and can be undone and redone."""

from __future__ import annotations

import psycopg
import pytest

from queue_runtime import downgrade, migrate
from queue_runtime.config import Settings
from queue_runtime.migrations import current_revision
from queue_runtime.migrations.naming import checked
from queue_runtime.pg.catalog import inspect_schema
from queue_runtime.schema import EXPECTED, Schema


def actual(settings: Settings) -> Schema:
    with psycopg.connect(settings.database_url or "") as conn:
        return inspect_schema(conn, settings.schema_name)


def assert_schema_matches(found: Schema) -> None:
    assert found.enums == EXPECTED.enums
    assert sorted(found.tables) == sorted(EXPECTED.tables)
    for name, table in EXPECTED.tables.items():
        assert found.tables[name].columns == table.columns, name
        assert found.tables[name].indexes == table.indexes, name
        assert found.tables[name].options == table.options, name


def test_upgrade_downgrade_upgrade(bare_settings: Settings) -> None:
    assert current_revision(bare_settings) is None
    migrate(bare_settings)
    assert current_revision(bare_settings) == "0009"
    assert_schema_matches(actual(bare_settings))

    downgrade(bare_settings, "base")
    assert current_revision(bare_settings) is None
    assert sorted(actual(bare_settings).tables) == ["alembic_version"]
    assert actual(bare_settings).enums == {}

    migrate(bare_settings)
    assert_schema_matches(actual(bare_settings))


def test_migrate_twice_is_a_no_op(settings: Settings) -> None:
    migrate(settings)
    assert current_revision(settings) == "0009"
    assert_schema_matches(actual(settings))


def test_hot_table_keeps_room_for_updates(settings: Settings) -> None:
    assert "fillfactor=70" in actual(settings).tables["jobs"].options


@pytest.mark.parametrize("name", ['x"; DROP TABLE t; --', "1abc", "has space", ""])
def test_unsafe_schema_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="unsafe PostgreSQL schema name"):
        checked(name)
