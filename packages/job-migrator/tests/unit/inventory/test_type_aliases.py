"""A module-level alias of a builtin container (``Config = dict[str, Any]``, ``Tags =
list[str]``, ``Settings = Mapping[str, Any]``) is that container: ``config.get(...)`` on a
parameter annotated ``Config`` is ``dict.get``. A subscript that is not a type (a value
looked up in a module-level table) is not taken for one."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

TYPES = """from typing import Any, Mapping

import requests

Config = dict[str, Any]
Tags = list[str]
Settings = Mapping[str, Any]


class Hook:
    def get(self, key):
        requests.post("https://hooks.example.com/get", json={"key": key})


HOOKS = {"default": Hook()}
Picked = HOOKS["default"]
"""
JOBS = """import threading

from types_ import Config, Picked, Settings, Tags


def read(config: Config, tags: Tags, settings: Settings):
    return config.get("a"), tags.index("b"), settings.get("c")


def call_hook(hook: Picked):
    hook.get("a")


def view(request):
    threading.Thread(target=read, args=({}, [], {})).start()
    threading.Thread(target=call_hook, args=(None,)).start()
"""


def _verdicts(scan_project: Scanner) -> dict[str, Idempotency]:
    inventory = scan_project({"types_.py": TYPES, "jobs.py": JOBS})
    return {j.qualname: j.idempotency for j in inventory.jobs}


def test_an_alias_of_a_builtin_container_is_that_container(scan_project: Scanner) -> None:
    assert _verdicts(scan_project)["jobs.read"] is Idempotency.IDEMPOTENT


def test_a_value_looked_up_in_a_table_is_no_type_alias(scan_project: Scanner) -> None:
    assert _verdicts(scan_project)["jobs.call_hook"] is not Idempotency.IDEMPOTENT
