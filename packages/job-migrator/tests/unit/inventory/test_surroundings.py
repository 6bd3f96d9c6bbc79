"""What encloses each site, as ``migrator scan`` records it (``CallSite.surroundings``) and
``migrator apply`` reads it: the ``except`` clauses that would catch the call's failure, the
``transaction.atomic`` blocks it would roll back, the view's opt-out of ATOMIC_REQUESTS, and
the settings turning ATOMIC_REQUESTS on (``Inventory.atomic_requests``).

Each source is a small reproduction written for the test (never a package's code).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from inventory import scan, surroundings_at
from inventory.models import Surroundings

VIEWS = """
import threading

import requests
from django.db import transaction
from django.db.transaction import atomic


def notify(user_id):
    requests.post("https://hooks.example/notify", json={"user": user_id})


def handled(request):
    try:
        notify(1)  # handled
    except ConnectionError:
        return None
    except OSError:
        raise
    finally:
        print("done")


def reraised(request):
    try:
        notify(1)  # reraised
    except OSError:
        raise


def in_block(request):
    with transaction.atomic():
        threading.Thread(target=notify, args=(1,)).start()  # in the block

        def later():
            threading.Thread(target=notify, args=(2,)).start()  # nested

        later()
    threading.Thread(target=notify, args=(3,)).start()  # after


@atomic(durable=True)
def decorated(request):
    threading.Thread(target=notify, args=(4,)).start()  # decorated


@transaction.non_atomic_requests
def opted_out(request):
    threading.Thread(target=notify, args=(5,)).start()  # opted out
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in {"app/__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _line(fragment: str) -> int:
    lines = textwrap.dedent(VIEWS).splitlines()
    return next(n for n, text in enumerate(lines, 1) if fragment in text)


def test_each_site_carries_what_encloses_it(tmp_path: Path) -> None:
    _write(tmp_path, {"app/views.py": VIEWS})
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    around = {s.location.line: s.surroundings for s in inventory.sites}
    block = [_line("with transaction.atomic()")]
    # the ConnectionError clause; ``except OSError: raise`` and ``finally`` handle nothing
    assert around[_line("# handled")] == Surroundings(caught_at=[_line("except ConnectionError")])
    assert around[_line("# reraised")] == Surroundings()
    assert around[_line("# in the block")] == Surroundings(atomic_at=block)
    assert around[_line("# nested")] == Surroundings(atomic_at=block)  # a def in the block
    assert around[_line("# after")] == Surroundings()
    assert around[_line("# decorated")] == Surroundings(atomic_at=[_line("@atomic(")])
    assert around[_line("# opted out")] == Surroundings(non_atomic_requests=True)


@pytest.mark.parametrize(
    ("settings", "lines"),
    [
        ('DATABASES = {"default": {"ENGINE": "x", "ATOMIC_REQUESTS": True}}\n', [1]),
        ('import os\nDATABASES = {"default": dict(ATOMIC_REQUESTS=os.environ["A"])}\n', [2]),
        ('DATABASES = {"default": {}}\nDATABASES["default"]["ATOMIC_REQUESTS"] = 1\n', [2]),
        ('OFF = False\nDATABASES = {"default": {"ATOMIC_REQUESTS": OFF}}\n', []),
        ('OFF: bool = False\nDATABASES = {"default": {"ATOMIC_REQUESTS": OFF}}\n', []),
        ('DATABASES = {"default": {"ATOMIC_REQUESTS": False}}\n', []),
        ('OFF = False\nOFF = True\nDATABASES = {"default": {"ATOMIC_REQUESTS": OFF}}\n', [3]),
    ],
)
def test_the_settings_turning_atomic_requests_on(
    tmp_path: Path, settings: str, lines: list[int]
) -> None:
    _write(tmp_path, {"app/settings.py": settings})
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    assert inventory.atomic_requests == [f"app/settings.py:{n}" for n in lines]


def test_surroundings_at_a_line_of_a_source_is_what_scan_gives_a_site_there() -> None:
    source = textwrap.dedent(VIEWS)
    caught = Surroundings(caught_at=[_line("except ConnectionError")])
    assert surroundings_at(source, _line("# handled")) == caught
    nested = Surroundings(atomic_at=[_line("with transaction.atomic()")])
    assert surroundings_at(source, _line("# nested")) == nested
    assert surroundings_at(source, 2) == Surroundings()  # module level


CLAUSES = """
import logging
import traceback

import requests
import sentry_sdk
from django.contrib import messages

logger = logging.getLogger(__name__)


def notify(user_id):
    requests.post("https://hooks.example/notify", json={"user": user_id})


def view(request, handler):
    try:
        notify(1)  # the call
    {handler}
    return None
"""


@pytest.mark.parametrize(
    "handler",
    [
        "except OSError:\n        pass",
        "except OSError:\n        logger.exception('notify failed')",
        "except OSError as exc:\n        logging.warning('notify failed: %s', exc)",
        "except OSError:\n        request.app.logger.error('notify failed')",
        "except OSError:\n        traceback.print_exc()",
        "except OSError as exc:\n        sentry_sdk.capture_exception(exc)",
        "except OSError as exc:\n        print(exc)",
        "except OSError:\n        logger.error('notify failed')\n        raise",
        "except OSError:\n        '''best effort'''\n        ...",
    ],
    ids=[
        "pass",
        "logger",
        "logging",
        "app-logger",
        "traceback",
        "sentry",
        "print",
        "log-raise",
        "docstring",
    ],
)
def test_a_clause_that_only_records_the_failure_handles_nothing(
    tmp_path: Path, handler: str
) -> None:
    """The request goes on the same way whether the call failed or not: nothing to hold."""
    _write(tmp_path, {"app/views.py": CLAUSES.replace("{handler}", handler)})
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    [site] = [s for s in inventory.sites if s.job == "app.views.notify"]
    assert site.surroundings == Surroundings()


@pytest.mark.parametrize(
    "handler",
    [
        "except OSError:\n        logger.exception('notify failed')\n        return False",
        "except OSError:\n        logger.exception('notify failed')\n        failed = True",
        "except OSError:\n        messages.error(request, 'The hook is down')",
        "except OSError:\n        logger.exception('x')\n        notify(2)",
        "except OSError:\n        dialog.error('notify failed')",
        "except OSError:\n        logger.exception('x')\n        raise ValueError('no hook')",
        "except OSError:\n        logger.exception('x')\n    else:\n        messages.info(request, 'sent')",
    ],
    ids=[
        "log-return",
        "log-flag",
        "message",
        "log-fallback",
        "not-a-logger",
        "log-raise-other",
        "log-with-else",
    ],
)
def test_a_clause_that_does_anything_else_handles_the_failure(tmp_path: Path, handler: str) -> None:
    _write(tmp_path, {"app/views.py": CLAUSES.replace("{handler}", handler)})
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    site = next(
        s for s in inventory.sites if s.location.line == _clause_line(handler, "# the call")
    )
    assert site.surroundings.caught_at == [_clause_line(handler, "except OSError")]


def _clause_line(handler: str, fragment: str) -> int:
    lines = textwrap.dedent(CLAUSES.replace("{handler}", handler)).splitlines()
    return next(n for n, text in enumerate(lines, 1) if fragment in text)
