"""Money read from the domain: model writes and methods named for money, and their look-alikes.

No payment SDK is called in these jobs: the names of the models, relations and
methods written are the evidence, and the evidence line says which name decided.
Reads, computed totals and models that only configure payments stay out.
"""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

MODELS = """\
from django.db import models


class Order(models.Model):
    def create_refund(self, amount):
        return Refund.objects.create(order=self, amount=amount)

    def get_total(self):
        return sum(line.price for line in self.lines.all())


class Payment(models.Model):
    pass


class Refund(models.Model):
    pass


class PaymentMethod(models.Model):
    pass


class SortOrder(models.Model):
    pass
"""
_MODELS = {"shop/models.py": MODELS}

EXAMPLES: list[RuleExample] = [
    example(
        "unsafe: a refund made through a domain method of the order",
        """
        from shop.models import Order

        def refund(order_id, amount):
            Order.objects.get(pk=order_id).create_refund(amount)
        """,
        "refund",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.DB_INSERT, K.DB_READ},
        "`create_refund` is named for moving money, and its body records a `Refund` row: both "
        "are evidence, each with its reason.",
        more_files=_MODELS,
        evidence_mentions="a method named for recording or moving money",
    ),
    example(
        "unsafe: a payment row recorded through the ORM",
        """
        from shop.models import Payment

        def record(order_id, amount):
            Payment.objects.create(order_id=order_id, amount=amount)
        """,
        "record",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.DB_INSERT},
        "A model named for money (payment, refund, payout, invoice, order, wallet, ledger, "
        "credit, subscription...) whose rows are created or updated: a retry records it twice.",
        more_files=_MODELS,
        evidence_mentions="records a row of Payment",
    ),
    example(
        "unsafe: a refund created through a related manager of an untyped order",
        """
        def refund_line(order, amount):
            order.refunds.create(amount=amount)
        """,
        "refund_line",
        V.UNSAFE,
        {K.ACCOUNT_STATE},
        "`order.refunds` is a relation (or `refund_set`, or a Prisma delegate `prisma.refund`): "
        "its name says which rows are created, even where the receiver's type is unknown.",
        evidence_mentions="records a row of Refunds",
    ),
    example(
        "unsafe: a subscription cancelled and credits granted, by method name",
        """
        def downgrade(user, subscription):
            subscription.cancel()
            user.add_credits(5)
        """,
        "downgrade",
        V.UNSAFE,
        {K.ACCOUNT_STATE},
        "A money verb (cancel, refund, capture, pay, renew...) on an order, invoice, "
        "subscription, wallet or payment, and a method named for changing credits, a balance "
        "or stock: the catalogue's [[keyword]] rules, each with the reason it gives.",
        evidence_mentions="subscription.cancel: a money verb on an order",
    ),
    example(
        "unsafe: a money verb on an untyped receiver still follows the method it may run",
        """
        def refund_order(order):
            order.invoice.refund()
        """,
        "refund_order",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.PAYMENT},
        "`order.invoice` has no known type: the name `refund` on an invoice is evidence, and "
        "the project's `refund` methods are still followed by name, so the Stripe refund one of "
        "them makes is reported too (a name rule adds evidence, it does not stand for the call).",
        more_files={
            "shop/billing.py": (
                "import stripe\n\n\nclass Invoice:\n"
                "    def refund(self):\n"
                "        stripe.Refund.create(charge=self.charge_id)\n"
            )
        },
        evidence_mentions="order.invoice.refund: a money verb",
    ),
    example(
        "unsafe: a payment built and saved",
        """
        from shop.models import Payment

        def settle(order_id, amount):
            payment = Payment(order_id=order_id, amount=amount)
            payment.save()
        """,
        "settle",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.DB_INSERT},
        "Constructing a money model and saving an instance in the same function records it.",
        more_files=_MODELS,
        evidence_mentions="creates and saves a Payment",
    ),
    example(
        "idempotent: a payment list that only reads and totals",
        """
        from shop.models import Order, Payment

        def payments_report(order_id):
            paid = [p.amount for p in Payment.objects.filter(order_id=order_id)]
            balance = sum(paid)
            return {"balance": balance, "total": Order.objects.get(pk=order_id).get_total()}
        """,
        "payments_report",
        V.IDEMPOTENT,
        {K.DB_READ},
        "Reading payments, computing a total and returning a balance write nothing: only "
        "writes and mutating calls are money evidence.",
        more_files=_MODELS,
    ),
    example(
        "non_idempotent: models named like money that hold none",
        """
        from shop.models import PaymentMethod, SortOrder

        def configure(position):
            PaymentMethod.objects.create(name="card")
            SortOrder.objects.create(position=position)
        """,
        "configure",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "`PaymentMethod` names configuration (its last word), `SortOrder` presentation (its "
        "first): inserts, not money.",
        more_files=_MODELS,
    ),
]
