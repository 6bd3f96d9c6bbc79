"""The facts argument safety reads in untyped Django code, and the ones it must not assume.

Real Django apps rarely annotate: a mail helper is called with a subject
rebuilt on the way (``subject = "".join(subject.splitlines())``), the sender
from ``settings.DEFAULT_FROM_EMAIL``, the recipient from ``customer.email``, a
body formatted with ``%``. Each of those is provably a str (or a JSON scalar)
from the code alone, so such a call moves. A name whose value differs by path,
a binding that comes back round a loop, a field whose value is not plain data
and ``render_to_string`` (a ``SafeString``, whose mark a worker would lose)
still do not, with the missing fact in the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Crossing, Status, plan_apply
from inventory.models import Argument, Inventory, Pattern
from tests.unit.codemods.conftest import build_inventory

MODELS = """import enum

from django.contrib.auth.models import AbstractUser
from django.db import models


class Customer(models.Model):
    email = models.EmailField()
    name = models.CharField(max_length=80, null=True)
    joined = models.DateTimeField()
    photo = models.ImageField()


class Member(AbstractUser):
    nickname = models.CharField(max_length=20)


class Kind(enum.Enum):
    WELCOME = "welcome"
    BYE = "bye"
"""

MAIL = """from shop.models import Kind


def send_note(subject, body, sender, to):
    ...


def send_kind(kind: Kind, to):
    ...
"""

VIEWS = """from django.conf import settings
from django.template.loader import render_to_string
from django.utils.translation import gettext as _

from shop.mail import send_kind, send_note
from shop.models import Customer, Kind, Member


def rebuilt(request, pk: int):
    customer = Customer.objects.get(pk=pk)
    subject = _("Welcome")
    subject = "".join(subject.splitlines())
    send_note(subject, "Hello %s" % customer.name, settings.DEFAULT_FROM_EMAIL, [customer.email])


def member(request, pk: int):
    user = Member.objects.get(pk=pk)
    send_note("Hi {}".format(user.nickname), user.first_name, "shop@example.com", [user.email])


def branch(request, pk: int, loud: bool):
    if loud:
        subject = "HELLO"
    else:
        subject = Customer.objects.get(pk=pk)
    send_note(subject, "x", "shop@example.com", [])


def loop(request, names: list[str]):
    subject = "Hello"
    for name in names:
        send_note(subject, name, "shop@example.com", [])
        subject = Customer.objects.get(pk=1)


def inner(request, names: list[str]):
    subject = Customer.objects.get(pk=1)
    for name in names:
        subject = "Hello".upper()
        send_note(subject, "inner", "shop@example.com", [])
        subject = Customer.objects.get(pk=2)


def joined(request, pk: int):
    customer = Customer.objects.get(pk=pk)
    send_note("Joined", customer.joined, "shop@example.com", [])


def photo(request, pk: int):
    customer = Customer.objects.get(pk=pk)
    send_note("Photo", customer.photo, "shop@example.com", [])


def rendered(request):
    body = render_to_string("mail.txt", {})
    send_note("Rendered", body, "shop@example.com", [])


def sorted_models(request):
    customers = Customer.objects.get(pk=1)
    send_note("Sorted", sorted(customers), "shop@example.com", [])


def sorted_names(request, names: list[str]):
    send_note("Sorted", sorted(names), "shop@example.com", [])


def kinds(request):
    send_kind(Kind.WELCOME, ["a@example.com"])


def _load(pk):
    customer = Customer.objects.get(pk=pk)
    return customer


def _maybe(pk):
    if pk:
        return Customer.objects.get(pk=pk)


def helper(request, pk: int):
    customer = _load(pk)
    send_note("Loaded", customer.email, "shop@example.com", [])


def maybe(request, pk: int):
    customer = _maybe(pk)
    send_note("Maybe", customer.email, "shop@example.com", [])
"""


@pytest.fixture
def root(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files(
        {
            "shop/__init__.py": "",
            "shop/models.py": MODELS,
            "shop/mail.py": MAIL,
            "shop/views.py": VIEWS,
        }
    )


def _inventory(root: Path, fragment: str, job: str = "shop.mail.send_note") -> Inventory:
    """The site at the job call after ``fragment`` (the view's ``def`` line), its arguments as
    the scan lists them."""
    text = (root / "shop/views.py").read_text()
    start = text.index(fragment)
    call = text.index(job.rsplit(".", 1)[1] + "(", start)
    line_text = text[call : text.index("\n", call)]
    inventory = build_inventory(root, [("shop/views.py", line_text, Pattern.DIRECT_CALL, job)])
    call_node = ast.parse(line_text.strip(), mode="eval").body
    assert isinstance(call_node, ast.Call)
    inventory.sites[0].arguments = [
        Argument(name=f"#{i}", source=ast.unparse(a), serialisable=None)
        for i, a in enumerate(call_node.args)
    ]
    return inventory


def test_a_subject_rebuilt_a_setting_a_formatted_body_and_a_field_move(root: Path) -> None:
    result = plan_apply(root, _inventory(root, "def rebuilt("), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    views = next(c for c in result.changes if c.path == "shop/views.py").after
    assert (
        'send_note.enqueue(subject, "Hello %s" % customer.name, settings.DEFAULT_FROM_EMAIL,'
        " [customer.email]" in views
    )


def test_fields_of_a_user_model_built_on_djangos_abstract_user_move(root: Path) -> None:
    result = plan_apply(root, _inventory(root, "def member("), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason


@pytest.mark.parametrize(
    ("view", "why"),
    [
        ("def branch(", "`subject` is bound more than once, and no one assignment reaches the use"),
        ("def loop(", "`subject` is bound more than once, and no one assignment reaches the use"),
        ("def joined(", "shop.models.Customer declares no plain-data field `joined`"),
        ("def photo(", "shop.models.Customer declares no plain-data field `photo`"),
        ("def rendered(", "no declared return type for `render_to_string(...)`"),
        ("def maybe(", "no declared return type for `_maybe(...)`"),
        ("def sorted_models(", "`sorted(customers)` holds the items of a value that is not JSON"),
    ],
)
def test_a_value_not_proven_plain_data_moves_and_is_checked_at_run_time(
    root: Path, view: str, why: str
) -> None:
    """Unproven is not a refusal: the runtime encodes the value at enqueue or runs the call
    in-process; the outcome names the unproven argument and the fact that is missing."""
    result = plan_apply(root, _inventory(root, view), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    unproven = [c for c in outcome.crossings if c.how is Crossing.RUNTIME]
    assert any(why in c.detail for c in unproven), outcome.crossings
    assert "checked at run time: falls back to running in-process" in outcome.arguments_note()


def test_the_assignment_in_the_loop_reaches_the_use_on_every_pass(root: Path) -> None:
    result = plan_apply(root, _inventory(root, "def inner("), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason


def test_an_enum_member_is_stored_when_the_job_declares_the_enum(root: Path) -> None:
    result = plan_apply(root, _inventory(root, "def kinds(", "shop.mail.send_kind"), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    views = next(c for c in result.changes if c.path == "shop/views.py").after
    assert 'send_kind.enqueue(Kind.WELCOME, ["a@example.com"]' in views


def test_an_unannotated_helper_is_read_through_its_returns(root: Path) -> None:
    """``_load`` returns the customer it loads on every path: its fields are known. ``_maybe``
    can fall off its end (an implicit None): it is not."""
    result = plan_apply(root, _inventory(root, "def helper("), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason


def test_sorted_of_plain_data_is_plain_data(root: Path) -> None:
    result = plan_apply(root, _inventory(root, "def sorted_names("), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
