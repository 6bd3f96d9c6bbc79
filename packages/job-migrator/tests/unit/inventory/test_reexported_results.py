"""What a function returns is known through the package that re-exports it.

``from pkg.telemetry import get_client`` where ``pkg/telemetry/__init__.py`` does ``from
._client import get_client``: ``get_client().track(...)`` is a call of the method of the
class ``get_client`` is annotated (or seen) to return, as when the function is imported
from the module that defines it. A re-exported function whose result the scan cannot type
stays a gap, and a re-exported *value* is not called."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Inventory
from inventory.models import Pattern

Scanner = Callable[[dict[str, str]], Inventory]

CLIENT = """import requests


class TelemetryClient:
    def track(self, path):
        requests.post("https://telemetry.example.com", json={"path": path})


class Other:
    def track(self, path):
        requests.put("https://other.example.com/" + path)


_CLIENT = TelemetryClient()


def get_client() -> TelemetryClient:
    return _CLIENT


def fresh_client():
    return TelemetryClient()


def any_client(name):
    return {"a": TelemetryClient(), "b": Other()}[name]
"""

PACKAGE = "from ._client import any_client, fresh_client, get_client  # noqa\n"

APP = """from fastapi import FastAPI
from pkg.telemetry import any_client, fresh_client, get_client

api = FastAPI()


@api.get("/a")
def annotated(path: str):
    get_client().track(path)


@api.get("/b")
def seen(path: str):
    fresh_client().track(path)


@api.get("/c")
def untyped(path: str):
    any_client(path).track(path)
"""


def sites(inventory: Inventory) -> dict[str, tuple[str, str]]:
    return {
        (s.enclosing_function or "").rsplit(".", 1)[-1]: (s.job, s.unresolved_reason)
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL
    }


def test_a_reexported_functions_result_is_typed(scan_project: Scanner) -> None:
    found = sites(
        scan_project(
            {
                "pkg/__init__.py": "",
                "pkg/telemetry/__init__.py": PACKAGE,
                "pkg/telemetry/_client.py": CLIENT,
                "pkg/app.py": APP,
            }
        )
    )
    job = "pkg.telemetry._client.TelemetryClient.track"
    assert found["annotated"] == (job, "")
    assert found["seen"] == (job, "")
    # Two classes define track and any_client's result is not typed: a gap, named.
    _, reason = found["untyped"]
    assert "receiver's type is not known" in reason


def test_a_reexport_through_two_packages(scan_project: Scanner) -> None:
    found = sites(
        scan_project(
            {
                "pkg/__init__.py": "from .telemetry import get_client  # noqa\n",
                "pkg/telemetry/__init__.py": PACKAGE,
                "pkg/telemetry/_client.py": CLIENT,
                "pkg/app.py": APP.replace(
                    "from pkg.telemetry import any_client, fresh_client, get_client",
                    "from pkg import get_client\nfrom pkg.telemetry import any_client, fresh_client",
                ),
            }
        )
    )
    assert found["annotated"] == ("pkg.telemetry._client.TelemetryClient.track", "")
