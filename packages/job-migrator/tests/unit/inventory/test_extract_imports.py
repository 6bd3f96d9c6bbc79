"""Imports, relative imports, module-level aliases, __all__."""

from __future__ import annotations

import textwrap

import pytest

from inventory._extract import extract_source
from inventory.summary import FileSummary


def summarise(source: str, module: str = "shop.views", is_package: bool = False) -> FileSummary:
    return extract_source(textwrap.dedent(source), "shop/views.py", module, is_package)


def test_plain_and_aliased_imports() -> None:
    summary = summarise(
        """
        import os.path
        import requests as rq
        from django.db import transaction
        from threading import Thread as T
        """
    )
    assert summary.imports == {
        "os": "os",
        "rq": "requests",
        "transaction": "django.db.transaction",
        "T": "threading.Thread",
    }


@pytest.mark.parametrize(
    ("statement", "module", "is_package", "local", "target"),
    [
        ("from .mail import send", "shop.views", False, "send", "shop.mail.send"),
        ("from . import mail", "shop.views", False, "mail", "shop.mail"),
        ("from . import x", "shop", True, "x", "shop.x"),
        ("from .mail import send", "shop", True, "send", "shop.mail.send"),
        ("from ..core.mail import send", "shop.api.views", False, "send", "shop.core.mail.send"),
        ("from .. import settings", "shop.api.views", False, "settings", "shop.settings"),
        ("from ..util import f", "shop.api", True, "f", "shop.util.f"),
    ],
)
def test_relative_imports_are_absolutised(
    statement: str, module: str, is_package: bool, local: str, target: str
) -> None:
    assert summarise(statement, module, is_package).imports[local] == target


def test_star_imports_and_literal_all() -> None:
    summary = summarise(
        """
        from .models import *
        from os import *
        __all__ = ["checkout", "refund"]
        """
    )
    assert summary.star_imports == ["shop.models", "os"]
    assert summary.all_names == ["checkout", "refund"]


def test_non_literal_all_is_none() -> None:
    assert summarise("__all__ = names()").all_names is None


def test_module_level_assignments_are_resolved_aliases() -> None:
    summary = summarise(
        """
        import threading
        from . import mail
        from concurrent.futures import ThreadPoolExecutor

        send = mail.send_email
        T = threading.Thread
        pool = ThreadPoolExecutor(4)
        count = 0
        """
    )
    assert summary.assignments["send"] == "shop.mail.send_email"
    assert summary.assignments["T"] == "threading.Thread"
    assert (
        summary.assignments["pool"] == "concurrent.futures.ThreadPoolExecutor"
    )  # instance: its class
    assert "count" not in summary.assignments


def test_function_level_imports_resolve_calls_in_that_function_only() -> None:
    summary = summarise(
        """
        def notify(user_id):
            from .mail import send
            send(user_id)

        def other(user_id):
            send(user_id)
        """
    )
    notify, other = summary.functions
    assert notify.calls[0].target == "shop.mail.send"
    assert other.calls[0].target == "shop.views.send"
    assert summary.imports["send"] == "shop.mail.send"


def test_conditional_imports_count() -> None:
    summary = summarise(
        """
        try:
            import ujson as json
        except ImportError:
            import json
        """
    )
    assert summary.imports["json"] == "json"
