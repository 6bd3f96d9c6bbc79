"""SDK sinks in the shipped catalogue, and money read from the domain's names (issue 26).

What a user checks: each documented SDK call gets its effect kind and key argument,
a look-alike with the same method name does not, and the money vocabulary of model
names leaves configuration and presentation models out.
"""

from __future__ import annotations

import pytest

from inventory._catalogue import Catalogue, CatalogueSpec, KeywordEntry
from inventory._classify._money import money_model
from inventory.models import EffectKind as K
from tests.unit.inventory.classify_builders import CATALOGUE, call


def _match(target: str, receiver: str = "") -> tuple[K, str | None] | None:
    found = CATALOGUE.match_call(call(target, receiver_source=receiver), target)
    return (found.kind, found.keyed_by) if found else None


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("stripe.Subscription.create", (K.PAYMENT, "idempotency_key")),
        ("stripe.Subscription.delete", (K.ACCOUNT_STATE, None)),
        ("stripe.Customer.create", (K.HTTP_POST, "idempotency_key")),
        ("stripe.StripeClient.payment_intents.create", (K.PAYMENT, "options")),
        ("stripe.StripeClient.v1.refunds.create", (K.PAYMENT, "options")),
        ("stripe.StripeClient.v1.customers.create", (K.HTTP_POST, "options")),
        ("stripe.PaymentIntent.retrieve", (K.HTTP_GET, None)),
        ("paypalrestsdk.Payment.create", (K.PAYMENT, None)),
        ("braintree.Transaction.sale", (K.PAYMENT, None)),
        ("braintree.BraintreeGateway.transaction.refund", (K.PAYMENT, None)),
        ("Adyen.Adyen.checkout.payments_api.payments", (K.PAYMENT, "idempotency_key")),
        ("mollie.api.client.Client.payments.create", (K.PAYMENT, "idempotency_key")),
        ("square.Square.payments.create", (K.PAYMENT, "idempotency_key")),
        ("square.client.Client.refunds.refund_payment", (K.PAYMENT, "body")),
        ("twilio.rest.Client.calls.create", (K.SMS_SEND, None)),
        ("twilio.rest.Client.api.account.messages.create", (K.SMS_SEND, None)),
        ("vonage.Vonage.sms.send", (K.SMS_SEND, None)),
        ("resend.Emails.send", (K.EMAIL_SEND, None)),
        ("sendgrid.SendGridAPIClient.send", (K.EMAIL_SEND, None)),
        ("postmarker.core.PostmarkClient.emails.send_batch", (K.EMAIL_SEND, None)),
        ("mailjet_rest.Client.send.create", (K.EMAIL_SEND, None)),
        ("flask_mail.Message.send", (K.EMAIL_SEND, None)),
        ("flask_mailman.EmailMessage.send", (K.EMAIL_SEND, None)),
        ("fastapi_mail.FastMail.send_message", (K.EMAIL_SEND, None)),
        ("aiosmtplib.send", (K.EMAIL_SEND, None)),
        ("firebase_admin.messaging.send_each_for_multicast", (K.PUSH_SEND, None)),
        ("pywebpush.webpush", (K.PUSH_SEND, None)),
        ("apns2.client.APNsClient.send_notification", (K.PUSH_SEND, None)),
        ("xhtml2pdf.pisa.CreatePDF", (K.REPORT_GENERATE, None)),
        ("google.cloud.storage.Blob.upload_from_string", (K.OBJECT_PUT, None)),
    ],
)
def test_documented_sdk_calls_get_their_effect_and_key(
    target: str, expected: tuple[K, str | None]
) -> None:
    assert _match(target) == expected


@pytest.mark.parametrize(
    ("target", "receiver"),
    [
        ("anthropic.Anthropic.messages.create", "client.messages"),  # an LLM, not Twilio
        ("?.messages.create", "client.beta.threads.messages"),  # OpenAI assistants
        ("?.upload_from_string", "loader"),  # not a blob
        ("stripe.StripeClient", ""),  # building a client does nothing
    ],
)
def test_look_alikes_are_not_sinks(target: str, receiver: str) -> None:
    assert _match(target, receiver) is None


def test_an_sns_publish_to_a_phone_number_is_an_sms() -> None:
    found = CATALOGUE.match_call(
        call(
            "?.publish",
            receiver_source="sns",
            kwargs={"PhoneNumber": "<expr>"},
            kwarg_sources={"PhoneNumber": "phone"},
        ),
        "?.publish",
    )
    assert found is not None and found.kind == K.SMS_SEND


@pytest.mark.parametrize(
    ("receiver", "fields", "expected"),
    [
        # Twilio on an untyped client: `to` is its one required parameter
        (
            "client.messages",
            {"kwargs": {"to": "<expr>"}, "kwarg_sources": {"to": "phone"}},
            K.SMS_SEND,
        ),
        ("self.twilio.messages", {"args": ["<expr>"], "arg_sources": ["phone"]}, K.SMS_SEND),
        # a mapping splatted in may carry `to` (django-two-factor-auth's Twilio gateway)
        (
            "self.client.messages",
            {"kwargs": {"**": "<expr>"}, "kwarg_sources": {"**": "send_kwargs"}},
            K.SMS_SEND,
        ),
        # Anthropic's keywords, no `to`: no SMS (the call stays a gap)
        (
            "self.client.messages",
            {
                "kwargs": {"model": "m", "max_tokens": 10, "messages": "<expr>"},
                "kwarg_sources": {"model": '"m"', "max_tokens": "10", "messages": "msgs"},
            },
            None,
        ),
        (
            "client.beta.messages",
            {"kwargs": {"**": "<expr>"}, "kwarg_sources": {"**": "request_data"}},
            None,
        ),
    ],
)
def test_an_untyped_messages_create_is_an_sms_only_when_it_sends_to_someone(
    receiver: str, fields: dict[str, object], expected: K | None
) -> None:
    found = CATALOGUE.match_call(
        call("?.messages.create", receiver_source=receiver, **fields), "?.messages.create"
    )
    assert (found.kind if found else None) == expected


@pytest.mark.parametrize(
    ("method", "receiver", "expected"),
    [
        ("create_refund", "order", K.ACCOUNT_STATE),
        ("cancel", "subscription", K.ACCOUNT_STATE),
        ("cancel", "shop.models.Order", K.ACCOUNT_STATE),
        ("add_credits", "user", K.ACCOUNT_STATE),
        ("mark_paid", "invoice", K.ACCOUNT_STATE),
        ("cancel", "task", None),  # asyncio
        ("cancel", "self.order_task", None),  # a name that only starts with "order"
        ("create_payment_link", "order", None),  # builds a URL
        ("get_total", "order", None),
    ],
)
def test_money_method_names_need_a_money_receiver_or_a_precise_name(
    method: str, receiver: str, expected: K | None
) -> None:
    found = CATALOGUE.match_keyword(call(f"?.{method}", receiver_source=receiver), f"?.{method}")
    assert (found.kind if found else None) == expected
    assert found is None or found.detail  # the evidence says why


def test_a_user_keyword_rule_gives_its_reason() -> None:
    rule = KeywordEntry(name="^settle$", receiver="ledger", effect=K.ACCOUNT_STATE, why="ours")
    catalogue = Catalogue(CatalogueSpec(keyword=[rule]))
    found = catalogue.match_keyword(call("?.settle", receiver_source="ledger"), "?.settle")
    assert found is not None and found.detail == "ours"


@pytest.mark.parametrize(
    ("model", "word"),
    [
        ("Payment", "payment"),
        ("GiftCardPayment", "payment"),
        ("Refunds", "refund"),
        ("Order", "order"),
        ("LedgerEntry", "ledger"),
        ("PaymentMethod", None),  # configuration
        ("OrderSerializer", None),
        ("SortOrder", None),  # presentation
        ("StockAlert", None),  # stock is read from fields, not model names
        ("Invitation", None),
    ],
)
def test_money_models_are_read_from_the_words_of_their_name(model: str, word: str | None) -> None:
    assert money_model(model) == word


def test_a_money_name_is_evidence_that_leaves_the_call_followed() -> None:
    named = call("?.create_refund", receiver_source="order")
    gateway = call("?.charge", receiver_source="gateway")
    assert CATALOGUE.match_keyword(named, "?.create_refund") is not None
    assert not CATALOGUE.explains(named, "?.create_refund")  # its callee is still followed
    assert CATALOGUE.explains(gateway, "?.charge")  # a payment API word stands for the call
