"""One error root: a caller catches ``InventoryError`` for anything the user can fix."""

from __future__ import annotations

import pytest

import inventory
from inventory._scan._files import decode
from inventory.config import MigratorConfig, ScanConfigError
from inventory.errors import InventoryError


def test_the_root_is_exported_by_the_package() -> None:
    assert inventory.InventoryError is InventoryError
    assert "InventoryError" in inventory.__all__


def test_a_config_error_is_an_inventory_error_and_still_a_value_error() -> None:
    # ValueError stays a base: callers that caught it before the root existed still do.
    assert issubclass(ScanConfigError, InventoryError)
    assert issubclass(ScanConfigError, ValueError)
    with pytest.raises(InventoryError, match=r"\[tool.migrator\]"):
        MigratorConfig.from_toml("[tool.migrator]\nmax_file_size = -1\n")


def test_an_unreadable_file_is_an_inventory_error() -> None:
    with pytest.raises(InventoryError, match="bad coding declaration"):
        decode(b"x = '\xff'\n")
