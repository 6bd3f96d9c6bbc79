"""The effect catalogue: what the shipped data says about common APIs, and user merging."""

from __future__ import annotations

import pydantic
import pytest

from inventory._catalogue import Catalogue, CatalogueSpec, EffectEntry
from inventory._extract import extract_source
from inventory.models import EffectKind as K
from inventory.models import Pattern
from inventory.summary import RawSite, Span, TargetKind
from tests.unit.inventory.classify_builders import CATALOGUE, call, run


def kind_of(target: str, catalogue: Catalogue = CATALOGUE, **fields: object) -> K | None:
    found = catalogue.match_call(call(target, **fields), target)
    return found.kind if found else None


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("requests.post", K.HTTP_POST),
        ("requests.get", K.HTTP_GET),
        ("httpx.AsyncClient.put", K.HTTP_PUT),
        ("django.core.mail.send_mail", K.EMAIL_SEND),
        ("smtplib.SMTP.sendmail", K.EMAIL_SEND),
        ("stripe.Refund.create", K.PAYMENT),
        ("stripe.PaymentIntent.capture", K.PAYMENT),
        ("uuid.uuid4", K.RANDOM_ID),
        ("secrets.token_hex", K.RANDOM_ID),
        ("subprocess.run", K.SUBPROCESS),
        ("time.sleep", K.SLEEP),
        ("csv.writer", K.REPORT_GENERATE),
        ("PIL.Image.open", K.IMAGE_PROCESS),
        ("json.dumps", None),
    ],
)
def test_exact_entries_give_their_effect(target: str, expected: K | None) -> None:
    assert kind_of(target) == expected


def test_stripe_payments_say_which_kwarg_keys_them() -> None:
    found = CATALOGUE.match_call(call("stripe.Charge.create"), "stripe.Charge.create")
    assert found is not None and found.keyed_by == "idempotency_key" and found.exact


def test_open_mode_decides_write_append_or_nothing() -> None:
    assert kind_of("open", args=["<expr>", "w"]) == K.FILE_WRITE
    assert kind_of("open", args=["<expr>", "ab"]) == K.FILE_APPEND
    assert kind_of("open", args=["<expr>"], kwargs={"mode": "a"}) == K.FILE_APPEND
    assert kind_of("open", args=["<expr>", "r"]) is None


def test_orm_suffix_patterns_and_their_refinements() -> None:
    assert kind_of("shop.models.Order.objects.create") == K.DB_INSERT
    objects = {"receiver_source": "cls.objects"}
    # ignore_conflicts skips rows whose unique key is taken: still an insert, deduplicated
    # only by a unique key the instances give (a guard); update_conflicts upserts.
    assert kind_of("?.bulk_create", kwargs={"ignore_conflicts": True}, **objects) == K.DB_INSERT
    upsert = kind_of(
        "?.bulk_create", receiver_source="cls.objects", kwargs={"update_conflicts": True}
    )
    assert upsert == K.DB_UPSERT
    assert kind_of("?.bulk_create", **objects) == K.DB_INSERT
    assert kind_of("?.update_or_create", **objects) == K.DB_UPSERT
    qs = "Order.objects.filter(pk=pk)"
    assert (
        kind_of("?.update", receiver_source=qs, kwarg_sources={"status": "'paid'"})
        == K.DB_OVERWRITE
    )
    assert (
        kind_of("?.update", receiver_source=qs, kwarg_sources={"n": "F('n') + 1"}) == K.DB_INCREMENT
    )


def test_suffix_matches_are_not_exact() -> None:
    found = CATALOGUE.match_call(call("?.create", receiver_source="Order.objects"), "?.create")
    assert found is not None and not found.exact and found.api == "Order.objects.create"


def test_receiver_hints_avoid_false_positives() -> None:
    assert kind_of("?.save", receiver_source="order") == K.DB_OVERWRITE
    assert kind_of("?.save", receiver_source="img") == K.FILE_WRITE
    assert kind_of("?.save", receiver_source="workbook") is None
    assert kind_of("?.incr", receiver_source="self.redis") == K.CACHE_INCR
    assert kind_of("?.incr", receiver_source="counter") is None
    assert kind_of("?.put_object", receiver_source="s3") == K.OBJECT_PUT
    assert kind_of("?.apply_async", receiver_source="pool") is None
    assert kind_of("?.delay", receiver_source="send_welcome") == K.ENQUEUE


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ('"INSERT INTO t (a) VALUES (%s)"', K.DB_INSERT),
        ('"INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO NOTHING"', K.DB_UPSERT),
        ('text("UPDATE acct SET n = n + 1 WHERE id = :id")', K.DB_INCREMENT),
        ("'''UPDATE t SET status = 'done' WHERE id = %s'''", K.DB_OVERWRITE),
        ('"DELETE FROM t WHERE id = %s"', K.DB_DELETE),
        ('"SELECT * FROM t"', K.DB_READ),
    ],
)
def test_executed_sql_is_classified_by_its_text(sql: str, expected: K) -> None:
    assert (
        kind_of("?.execute", receiver_source="cursor", args=["<expr>"], arg_sources=[sql])
        == expected
    )


def test_sql_held_in_a_variable_uses_the_hint() -> None:
    sql_call = call("?.execute", receiver_source="cur", args=["<expr>"], arg_sources=["sql"])
    found = CATALOGUE.match_call(sql_call, "?.execute", sql_hint='"INSERT INTO audit VALUES (1)"')
    assert found is not None and found.kind == K.DB_INSERT


def test_money_words_on_payment_receivers_only() -> None:
    gateway = call("?.refund", receiver_source="self.payment_gateway")
    assert CATALOGUE.match_keyword(gateway, "?.refund") is not None
    assert CATALOGUE.match_keyword(call("?.refund", receiver_source="self.ui"), "?.refund") is None
    assert CATALOGUE.match_augassign("balance") == K.ACCOUNT_STATE
    assert CATALOGUE.match_augassign("views") is None


def test_user_entries_override_shipped_ones_and_come_first() -> None:
    user = CatalogueSpec(
        effect=[
            EffectEntry(call="requests.post", effect=K.HTTP_PUT),
            EffectEntry(
                call="acme.billing.Client.charge", effect=K.PAYMENT, keyed_by="request_key"
            ),
        ]
    )
    merged = Catalogue.load(user)
    assert kind_of("requests.post", merged) == K.HTTP_PUT
    found = merged.match_call(call("acme.billing.Client.charge"), "acme.billing.Client.charge")
    assert found is not None and found.kind == K.PAYMENT and found.keyed_by == "request_key"
    assert kind_of("requests.get", merged) == K.HTTP_GET


@pytest.mark.parametrize(
    "entry",
    [
        {"call": "x.y", "effect": "teleport"},
        {"call": "x.y", "when": [{"matches": "a", "effect": "file_write"}]},  # which argument?
        {"call": "x.y", "when": [{"arg": 1, "effect": "file_write"}]},  # what test?
    ],
)
def test_entries_that_cannot_mean_anything_are_rejected(entry: dict[str, object]) -> None:
    with pytest.raises(pydantic.ValidationError):
        CatalogueSpec.model_validate({"effect": [entry]})


# Each family as the extractor really spells it (typed instances, untyped clients, ...).
FAMILIES = [
    ("import redis\nr = redis.Redis()\ndef job(k):\n    r.incr(k)\n", {K.CACHE_INCR}),
    (
        "import redis\ndef job(k):\n    c = redis.Redis()\n    c.lpush('q', k)\n    c.set(k, 1)\n",
        {K.CACHE_INCR, K.CACHE_SET},
    ),
    (
        "import boto3\ndef job(k):\n    s3 = boto3.client('s3')\n    s3.put_object(Bucket='b', Key=k, Body=b'')\n",
        {K.OBJECT_PUT},
    ),
    (
        "import boto3\ndef job(k):\n    sqs = boto3.client('sqs')\n    sqs.send_message(QueueUrl='u', MessageBody=k)\n",
        {K.MESSAGE_PUBLISH},
    ),
    (
        "import boto3\ndef job(k):\n    ses = boto3.client('ses')\n    ses.send_email(Source='a', Destination={}, Message={})\n",
        {K.EMAIL_SEND},
    ),
    ("from app.tasks import send\ndef job(k):\n    send.delay(k)\n", {K.ENQUEUE}),
    ("import subprocess\ndef job(k):\n    subprocess.run(['convert', k])\n", {K.SUBPROCESS}),
    (
        "def job(session, k):\n    session.add(k)\n    session.merge(k)\n",
        {K.DB_INSERT, K.DB_UPSERT},
    ),
    ("from pathlib import Path\ndef job(k):\n    Path(k).write_text('x')\n", {K.FILE_WRITE}),
    ("def job(k):\n    with open(k, 'a') as f:\n        f.write('x')\n", {K.FILE_APPEND}),
    (
        "from twilio.rest import Client\ndef job(k):\n    c = Client('a', 'b')\n    c.messages.create(to=k, body='hi')\n",
        {K.SMS_SEND},
    ),
    (
        "import urllib.request\ndef job(k):\n    urllib.request.urlopen(k, data=b'x')\n",
        {K.HTTP_POST},
    ),
    (
        "import httpx\ndef job(k):\n    with httpx.Client() as c:\n        c.delete(k)\n",
        {K.HTTP_DELETE},
    ),
    ("import time\ndef job(k):\n    time.sleep(1)\n", {K.SLEEP}),
    ("import csv\ndef job(out):\n    csv.writer(out).writerow([1])\n", {K.REPORT_GENERATE}),
]


@pytest.mark.parametrize(
    ("source", "kinds"), FAMILIES, ids=[s.splitlines()[0] for s, _ in FAMILIES]
)
def test_families_as_the_extractor_spells_them(source: str, kinds: set[K]) -> None:
    summary = extract_source(source, "m.py", "m", False)
    site = RawSite(
        pattern=Pattern.THREAD, span=Span(line=1), target="m.job", target_kind=TargetKind.FUNCTION
    )
    summary = summary.model_copy(update={"sites": [site]})
    _, jobs = run(summary)
    assert {e.kind for e in jobs[0].effects} == kinds


@pytest.mark.parametrize(
    ("target", "receiver", "pure"),
    [
        # The whole census's verdict blockers at 89a0611 that the standard library's and the
        # libraries' own documentation call in-memory work.
        ("globals", "", True),
        ("sys._getframe", "", True),
        ("locals", "", True),
        ("datetime.datetime.replace", "", True),
        ("datetime.datetime.astimezone", "", True),
        ("pathlib.Path.cwd", "", True),
        ("shutil.which", "", True),
        ("tomllib.loads", "", True),
        ("orjson.loads", "", True),
        ("flask_babel.gettext", "", True),
        ("?.setLevel", "logger", True),
        ("?.isEnabledFor", "self.log", True),
        # ... and what stays unexplained: the same method names off a logger, code run
        # from a string, a console read.
        ("?.setLevel", "pump", False),
        ("eval", "", False),
        ("exec", "", False),
        ("input", "", False),
    ],
)
def test_in_memory_apis_are_pure_and_their_neighbours_are_not(
    target: str, receiver: str, pure: bool
) -> None:
    found = call(target, receiver_source=receiver)
    assert CATALOGUE.is_pure(found, target, unknown_receiver=bool(receiver)) is pure


def test_the_clock_reads_of_datetime_stay_effects_under_its_pure_glob() -> None:
    for target in ("datetime.datetime.now", "datetime.datetime.today", "datetime.date.today"):
        assert kind_of(target) == K.RANDOM_ID, target
