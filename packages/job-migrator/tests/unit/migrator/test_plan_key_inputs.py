"""Issue 22, item 3: the plan never suggests a key over a secret or over an object's text.

A key is stored in ``job_keys`` and shown by the tooling: a digest over a
plaintext password (``{*}`` of ``change_password(user_id, new_password)``) is
an unsalted hash of it, and ``{token}`` is the token itself. A template field
is formatted with ``str()``: ``{user}`` of a model instance is its text
(``User object (1)``, a name, an e-mail) and ``{form}`` of a form is its HTML,
neither of which names one unit of work. Each case is a small project scanned
for real (``inventory.scan``), then planned (``build_plan``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import scan
from inventory.models import Inventory
from migrator.plan import PlanConfig, build_plan
from migrator.plan.keys import resolve_key

ACCOUNTS = """\
import smtplib
import threading

import requests
from django.db import models


class Document(models.Model):
    title = models.CharField(max_length=100)


class UserForm:
    def __init__(self, data):
        self.data = data


def change_password(user_id, new_password):
    requests.post(f"https://auth.example/users/{user_id}/password", json={"pw": new_password})


def rotate_api_token(token):
    requests.post("https://auth.example/tokens", json={"token": token})


def sync_profile(user):
    requests.post("https://crm.example/contacts", json={"email": user.email})


def save_feedback(form):
    requests.post("https://crm.example/feedback", json={"text": form.data["text"]})


def sync_account(account: "Account"):
    requests.post("https://crm.example/accounts", json=account.as_dict())


def archive(doc):
    requests.post("https://archive.example/docs", data=serialise(doc))


def serialise(value):
    return repr(value)


def mail_new_password(user, new_password):
    smtplib.SMTP("localhost").sendmail("a@example.com", [user.email], new_password)


def sync_name(name):
    requests.post("https://crm.example/names", json={"name": name.strip()})


def sync_order(order_id, amount):
    requests.post("https://crm.example/orders", json={"id": order_id, "amount": amount})


def view(request, user, account):
    form = UserForm(request.POST)
    for target, args in (
        (change_password, (user.id, request.POST["pw"])),
        (rotate_api_token, (request.POST["token"],)),
        (sync_profile, (user,)),
        (save_feedback, (form,)),
        (sync_account, (account,)),
        (sync_name, (request.POST["name"],)),
        (sync_order, (1, 2)),
    ):
        threading.Thread(target=target, args=args).start()


def direct(user_id, pw, token, user, form, account, name):
    threading.Thread(target=change_password, args=(user_id, pw)).start()
    threading.Thread(target=rotate_api_token, args=(token,)).start()
    threading.Thread(target=sync_profile, args=(user,)).start()
    threading.Thread(target=save_feedback, args=(UserForm({}),)).start()
    threading.Thread(target=sync_account, args=(account,)).start()
    threading.Thread(target=sync_name, args=(name,)).start()
    threading.Thread(target=sync_order, args=(1, 2)).start()


def mail_view(user, pw):
    threading.Thread(target=mail_new_password, args=(user, pw)).start()


def archive_view(pk):
    doc = Document.objects.get(pk=pk)
    threading.Thread(target=archive, args=(doc,)).start()
"""


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("accounts")
    (root / "accounts.py").write_text(ACCOUNTS)
    return scan(root, use_cache=False)


def plan_key(inventory: Inventory, name: str) -> str | None:
    """The key the plan tells the user to declare for ``accounts.<name>`` (None: none)."""
    qualname = f"accounts.{name}"
    job = next(j for j in inventory.jobs if j.qualname == qualname)
    planned = build_plan(inventory, PlanConfig())
    item = planned.item(f"{qualname}/key")
    assert item is not None, f"no key item for {qualname}: {job.idempotency}"
    sites = [s for s in inventory.sites if s.job == qualname]
    found = resolve_key(job, root=Path(inventory.root), sites=sites)
    command = item.command.split(" key = ", 1)[1].strip('"') if item.command else None
    assert command == found.template, (command, found)
    return command


def test_no_key_over_a_password_or_a_token(scanned: Inventory) -> None:
    """A secret in a key is stored with the job: per call ({+}) instead, never a digest of it."""
    for name in ("change_password", "rotate_api_token"):
        key = plan_key(scanned, name)
        assert key == f"accounts.{name}:{{+}}", key


def test_no_key_over_an_objects_text(scanned: Inventory) -> None:
    """{user} would be str(user); the digest covers the argument as the job stores it.

    Read as an object in the job (``user.email``, ``form.data``), annotated with a class
    (``account: "Account"``), or passed a model instance at its site (``archive(doc)``)."""
    for name in ("sync_profile", "save_feedback", "sync_account", "archive"):
        key = plan_key(scanned, name)
        assert key == f"accounts.{name}:{{*}}", key


def test_plain_values_keep_their_readable_keys(scanned: Inventory) -> None:
    assert plan_key(scanned, "sync_name") == "accounts.sync_name:{name}"
    assert plan_key(scanned, "sync_order") == "accounts.sync_order:{*}"


def test_the_scan_suggests_per_call_keys_only(scanned: Inventory) -> None:
    """The scanner suggests a key only for notifications, made per call: never over inputs."""
    suggested = {j.qualname: j.suggested_key for j in scanned.jobs if j.suggested_key}
    assert suggested == {"accounts.mail_new_password": "accounts.mail_new_password:{+}"}
    assert plan_key(scanned, "mail_new_password") == "accounts.mail_new_password:{+}"
