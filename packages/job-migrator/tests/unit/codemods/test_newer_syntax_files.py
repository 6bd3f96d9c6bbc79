"""A module written for Python 3.12, scanned and applied under an older Python.

The scan reads it (``inventory._extract._lower`` spells a PEP 701 f-string for 3.11), so
its sites are found; apply cannot check a rewrite of a module the running Python does not
compile, so it leaves the file byte for byte and says which Python to run it with.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Status, plan_apply
from inventory import scan

Files = Callable[[dict[str, str]], Path]

VIEWS = """import threading

from shop.mail import send_receipt


def checkout(request, order_id):
    note = f"{request.GET["note"]}"
    threading.Thread(target=send_receipt, args=(order_id,)).start()
    return note
"""
MAIL = "def send_receipt(order_id):\n    return order_id\n"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 and later compile the module")
def test_a_312_module_is_scanned_and_left_untouched_by_apply(write_files: Files) -> None:
    root = write_files({"shop/__init__.py": "", "shop/views.py": VIEWS, "shop/mail.py": MAIL})
    inventory = scan(root, use_cache=False, write=False)
    assert inventory.errors == []
    [site] = inventory.sites
    assert (site.location.path, site.location.line, site.job) == (
        "shop/views.py",
        8,
        "shop.mail.send_receipt",
    )

    [outcome] = plan_apply(root, inventory, scanner=None).outcomes

    assert outcome.status is Status.SKIPPED
    assert "does not compile this module as it is" in outcome.reason
    assert "run migrator with the project's Python" in outcome.reason
    assert (root / "shop/views.py").read_text() == VIEWS
