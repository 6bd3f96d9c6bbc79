"""Issue 12: two distinct mails enqueued with the plan's suggested key both run.

Against real PostgreSQL (an isolated schema): each mail job is registered as a
``non_idempotent`` job, so the gate keeps it inline (uncertified) and the
execution guard runs it under its key, the path every enqueue of a moved job
takes before certification. The key is the one ``migrator plan`` suggests,
rendered for the call as the rewritten call site would (``queue_runtime.keys``).

- The Django mail-helper shape (``send_notification(subject, message,
  from_email, recipient_list)``): the scanner once suggested subject + sender,
  which sent 2 of 5 distinct mails; the digest key sends all 5, and a second
  run of the same 5 sends none.
- examples/shop: ``send_welcome`` and ``send_receipt`` (real functions, mail in
  the shop's outbox) for two users / two orders.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from inventory import scan
from inventory.models import Inventory
from migrator.plan import PlanConfig, build_plan
from queue_runtime import QueueError, configure
from queue_runtime.jobs import JobFunction, job
from queue_runtime.keys import render_key
from queue_runtime.registry import Registry
from queue_runtime.testing import isolated_settings, pg_admin_url, pg_problem, require

SHOP = Path(__file__).resolve().parents[4] / "examples" / "shop"

HELPER = """\
from django.core.mail import send_mail


def send_notification(subject, message, from_email, recipient_list):
    send_mail(subject, message, from_email, recipient_list)
"""
VIEW = """\
import threading

from notify.mail import send_notification


def comment_posted(request, post):
    threading.Thread(
        target=send_notification,
        args=("New comment", post.text, "blog@example.com", [post.author_email]),
    ).start()
"""
# The key the scanner suggested before issue 12 (the subject and the sender, no recipient).
OLD_KEY = "notify.mail.send_notification:{subject}:{from_email}"


@pytest.fixture(scope="module")
def queue() -> Iterator[None]:
    require(pg_problem())
    with isolated_settings(pg_admin_url()) as settings:
        runtime = configure(settings)
        try:
            yield
        finally:
            runtime.close()


def plan_key(inventory: Inventory, job_name: str) -> str:
    """The key ``migrator plan`` tells the user to declare for ``job_name``."""
    plan = build_plan(inventory, PlanConfig())
    item = plan.item(f"{job_name}/key")
    assert item is not None and item.command is not None, f"no key item for {job_name}"
    return item.command.split(" key = ", 1)[1].strip('"')


def gated(fn: Callable[..., Any], name: str) -> JobFunction[..., Any]:
    """``fn`` registered as a non-idempotent job (the gate keeps it inline, under the guard)."""
    registered: JobFunction[..., Any] = job(
        name=name, idempotency="non_idempotent", registry=Registry()
    )(fn)
    return registered


def enqueue_all(jf: JobFunction[..., Any], key: str, calls: list[tuple[Any, ...]]) -> None:
    for args in calls:
        jf.enqueue(*args, idempotency_key=render_key(jf, key, args, {}))


@pytest.fixture(scope="module")
def helper_inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("django_mail")
    (root / "notify").mkdir()
    (root / "notify" / "__init__.py").write_text("")
    (root / "notify" / "mail.py").write_text(HELPER)
    (root / "notify" / "views.py").write_text(VIEW)
    return scan(root, use_cache=False)


def test_the_mail_helper_gets_a_per_call_key(helper_inventory: Inventory) -> None:
    key = plan_key(helper_inventory, "notify.mail.send_notification")
    assert key == "notify.mail.send_notification:{+}"


def test_five_distinct_mails_with_the_suggested_key_all_run_once(
    queue: None, helper_inventory: Inventory
) -> None:
    key = plan_key(helper_inventory, "notify.mail.send_notification")
    sent: list[tuple[str, str]] = []

    def send_notification(
        subject: str, message: str, from_email: str, recipient_list: list[str]
    ) -> None:
        sent.append((subject, recipient_list[0]))

    jf = gated(send_notification, "notify.mail.send_notification")
    mails = [("New comment", f"text {n}", "blog@example.com", [f"u{n}@x.org"]) for n in range(5)]
    enqueue_all(jf, key, mails)
    assert sorted(r for _, r in sent) == [f"u{n}@x.org" for n in range(5)]
    # The same five asked for again are new requests (issue 22): each is sent again, never
    # answered with the first mail's result for as long as keys are kept.
    enqueue_all(jf, key, mails)
    assert len(sent) == 10
    # One call's key, delivered twice (a redelivery or retry of that call): sent once.
    once = render_key(jf, key, mails[0], {})
    jf.enqueue(*mails[0], idempotency_key=once)
    jf.enqueue(*mails[0], idempotency_key=once)
    assert len(sent) == 11


def test_the_old_suggestion_would_have_merged_them(queue: None) -> None:
    """The control: with subject + sender, four of five mails never run (the guard refuses a key
    reused with other arguments, or, before it did, answered with the first mail's result)."""
    sent: list[str] = []

    def send_notification(
        subject: str, message: str, from_email: str, recipient_list: list[str]
    ) -> None:
        sent.append(recipient_list[0])

    jf = gated(send_notification, "notify.mail.send_notification_old")
    key = OLD_KEY.replace("send_notification", "send_notification_old")
    for n in range(5):
        args = ("Hi", "text", "blog@example.com", [f"u{n}@x.org"])
        with contextlib.suppress(QueueError):
            jf.enqueue(*args, idempotency_key=render_key(jf, key, args, {}))
    assert sent == ["u0@x.org"]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inventory, Path]]:
    root = tmp_path_factory.mktemp("shop") / "shop"
    shutil.copytree(SHOP, root, ignore=shutil.ignore_patterns(".migrator", "__pycache__"))
    sys.path.insert(0, str(root))
    try:
        yield scan(root, use_cache=False), root
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "shop" or m.startswith("shop.")]:
            del sys.modules[name]


def test_the_shop_never_gets_a_key_that_drops_a_second_order(
    shop: tuple[Inventory, Path],
) -> None:
    inventory, _ = shop
    assert plan_key(inventory, "shop.jobs.stock.decrement_stock") == (
        "shop.jobs.stock.decrement_stock:{*}"
    )


def test_two_distinct_shop_mails_with_the_suggested_keys_both_run(
    queue: None, shop: tuple[Inventory, Path], tmp_path: Path
) -> None:
    inventory, _ = shop
    from shop import mail, repo
    from shop.db import connect, init_db
    from shop.services import Services, install, uninstall
    from shop.settings import Settings

    settings = Settings.in_directory(tmp_path)
    init_db(settings.database)
    outbox: list[EmailMessage] = []
    services = Services(settings=settings, outbox=outbox)
    install(services)
    try:
        with connect(settings.database) as conn:
            users = [repo.insert_user(conn, f"u{n}@x.org", f"U{n}") for n in range(2)]
            product = repo.insert_product(conn, "Mug", 900, 10)
            orders = [repo.insert_order(conn, u.id, product, 1, 900, "2026-01-01") for u in users]
        for name, fn, ids in (
            ("shop.mail.send_welcome", mail.send_welcome, [u.id for u in users]),
            ("shop.mail.send_receipt", mail.send_receipt, [o.id for o in orders]),
        ):
            key = plan_key(inventory, name)
            before = len(outbox)
            enqueue_all(gated(fn, name), key, [(i,) for i in ids])
            assert len(outbox) - before == 2, f"{name} with key {key!r}"
        assert sorted(m["To"] for m in outbox) == ["u0@x.org", "u0@x.org", "u1@x.org", "u1@x.org"]
    finally:
        uninstall(services)
