"""A call whose exceptions the caller handles stays manual: an enqueue raises none of them.

``try: send_otp(email) except ConnectionRefusedError: messages.error(...)`` tells
the user when the mail server is down. Enqueued, the call returns at once and the
failure happens later on a worker: the message would never show. Such a site is
left manual with the handler's lines; a handler that only re-raises, and a
``try``/``finally``, handle nothing and do not hold the site back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Status, plan_apply
from inventory.models import Argument, Pattern
from tests.unit.codemods.conftest import build_inventory

MAIL = """def send_otp(email: str):
    ...
"""

VIEWS = """import logging

from django.contrib import messages

from shop.mail import send_otp

logger = logging.getLogger(__name__)


def handled(request, email: str):
    try:
        send_otp(email)  # handled
    except ConnectionRefusedError:
        messages.error(request, "The mail service is down")
    except OSError:
        raise
    return None


def reraised(request, email: str):
    try:
        send_otp(email)  # reraised
    except OSError:
        raise


def cleaned(request, email: str):
    try:
        send_otp(email)  # cleaned
    finally:
        messages.info(request, "done")


def outside(request, email: str):
    try:
        messages.info(request, "sending")
    except ValueError:
        pass
    send_otp(email)  # outside


def logged(request, email: str):
    try:
        send_otp(email)  # logged
    except ConnectionRefusedError:
        logger.exception("could not send the code")
    return None


def logged_and_told(request, email: str):
    try:
        send_otp(email)  # told
    except ConnectionRefusedError:
        logger.exception("could not send the code")
        messages.error(request, "The mail service is down")
    return None
"""


@pytest.fixture
def root(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files({"shop/__init__.py": "", "shop/mail.py": MAIL, "shop/views.py": VIEWS})


def _apply(root: Path, marker: str) -> tuple[Status, str, list[int]]:
    inventory = build_inventory(
        root, [("shop/views.py", f"# {marker}", Pattern.DIRECT_CALL, "shop.mail.send_otp")]
    )
    inventory.sites[0].arguments = [Argument(name="#0", source="email", serialisable=None)]
    [outcome] = plan_apply(root, inventory, scanner=None).outcomes
    return outcome.status, outcome.reason, outcome.lines


def test_a_call_whose_failure_the_caller_reports_stays_manual_with_the_handler_lines(
    root: Path,
) -> None:
    status, reason, lines = _apply(root, "handled")

    assert status is Status.MANUAL
    # the except that tells the user; the re-raising one handles nothing
    assert lines == [VIEWS.splitlines().index("    except ConnectionRefusedError:") + 1]
    assert "the caller handles the job's exceptions" in reason
    assert "would no longer happen" in reason


def test_a_handler_that_logs_and_tells_the_user_still_holds_it(root: Path) -> None:
    """Only a clause that records the failure and goes on handles nothing: one that also
    shows the user a message depends on the call failing here."""
    status, reason, lines = _apply(root, "told")

    assert status is Status.MANUAL, reason
    assert lines == [VIEWS.splitlines().index("def logged_and_told(request, email: str):") + 4]


@pytest.mark.parametrize("marker", ["reraised", "cleaned", "outside", "logged"])
def test_a_handler_that_only_reraises_a_finally_or_a_try_elsewhere_does_not_hold_it(
    root: Path, marker: str
) -> None:
    status, reason, _ = _apply(root, marker)

    assert status is Status.REWRITTEN, reason
