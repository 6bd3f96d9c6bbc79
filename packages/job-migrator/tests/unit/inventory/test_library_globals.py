"""Flask's request globals, read from the installed Flask as the scan reads any library.

``flask.globals`` is a module of flask, not the builtin ``globals``: names in it resolve to
``flask.globals.*`` and are read there (they were cut to ``globals.session.get``, a name
no catalogue entry or module could explain). ``session: SessionMixin = LocalProxy(...)``
stands for what its annotation says, not for the proxy class. Needs Flask installed in the
scanning interpreter (queue-runtime's test extras install it).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory

pytest.importorskip("flask", reason="Flask is installed by queue-runtime[test-frameworks]")

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import threading

from flask import current_app, flash, session


def remember():
    return session.get("cart"), current_app._get_current_object()


def note(message):
    flash(message)


def view():
    threading.Thread(target=remember).start()
    threading.Thread(target=note, args=("saved",)).start()
"""


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[str]]]:
    inventory = scan_project({"app.py": APP})
    return {j.qualname: (j.idempotency, {u.call for u in j.unexplained}) for j in inventory.jobs}


def test_reading_flasks_session_is_explained(scan_project: Scanner) -> None:
    verdict, unexplained = _jobs(scan_project)["app.remember"]
    assert verdict is Idempotency.IDEMPOTENT, unexplained


def test_a_library_module_named_like_a_builtin_keeps_its_package(scan_project: Scanner) -> None:
    _, unexplained = _jobs(scan_project)["app.note"]
    assert not any(call.startswith("globals.") for call in unexplained), unexplained
