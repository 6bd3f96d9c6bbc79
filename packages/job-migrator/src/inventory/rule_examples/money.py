"""Money and account state: unsafe unless keyed by the job's inputs."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

GATEWAY = """\
import httpx


class PaymentGateway:
    def __init__(self):
        self._http = httpx.Client(base_url="https://pay.example.com")

    def capture(self, order_id, idempotency_key):
        self._http.post(
            "/captures", json={"order": order_id}, headers={"Idempotency-Key": idempotency_key}
        )

    def refund(self, order_id):
        self._http.post("/refunds", json={"order": order_id})
"""


EXAMPLES: list[RuleExample] = [
    example(
        "unsafe: a refund without an idempotency key",
        """
        import stripe

        def refund(order_id):
            stripe.Refund.create(charge=order_id, amount=100)
        """,
        "refund",
        V.UNSAFE,
        {K.PAYMENT},
        "A retry after a timeout refunds again: money moves twice. Unsafe wins over every other rule.",
        evidence_mentions="without idempotency_key: money may move twice",
    ),
    example(
        "needs_key: a charge keyed by the job's input",
        """
        import stripe

        def charge(order_id):
            stripe.Charge.create(amount=100, idempotency_key=f"charge-{order_id}")
        """,
        "charge",
        V.NEEDS_KEY,
        {K.PAYMENT},
        "The key is derived from the job's inputs, so a retry is deduplicated by Stripe: safe only with the key.",
    ),
    example(
        "unsafe: a key minted with uuid4() inside the job does not count",
        """
        import uuid
        import stripe

        def charge(order_id):
            stripe.Charge.create(amount=100, idempotency_key=str(uuid.uuid4()))
        """,
        "charge",
        V.UNSAFE,
        {K.PAYMENT, K.RANDOM_ID},
        "Every run mints a new key, so the payment provider cannot recognise the retry.",
        evidence_mentions="minted inside the job",
    ),
    example(
        "unsafe: account state changed relative to itself",
        """
        from shop.models import Wallet

        def debit(user_id):
            wallet = Wallet.objects.get(user_id=user_id)
            wallet.balance -= 10
            wallet.save()
        """,
        "debit",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.DB_INCREMENT, K.DB_READ},
        "`balance -= 10` then save: a retry debits twice.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Wallet(models.Model):\n    pass\n"
        },
    ),
    example(
        "needs_key: an in-house gateway client, keyed by a header",
        """
        from shop.gateway import PaymentGateway

        def capture(order_id):
            gateway = PaymentGateway()
            gateway.capture(order_id, idempotency_key=f"capture-{order_id}")
        """,
        "capture",
        V.NEEDS_KEY,
        {K.PAYMENT, K.HTTP_POST},
        "The client is project code whose body only shows an HTTP POST; `capture` on a payment-ish "
        "receiver says money moves. The key reaches the provider as an `Idempotency-Key` header.",
        more_files={"shop/gateway.py": GATEWAY},
    ),
    example(
        "unsafe: the same client's refund, without a key",
        """
        from shop.gateway import PaymentGateway

        def refund(order_id):
            gateway = PaymentGateway()
            gateway.refund(order_id)
        """,
        "refund",
        V.UNSAFE,
        {K.PAYMENT, K.HTTP_POST},
        "No key anywhere on the path: a retry refunds twice.",
        more_files={"shop/gateway.py": GATEWAY},
    ),
    example(
        "unsafe: a spend total accumulated in memory (read-modify-write)",
        """
        SPEND = {}

        def track_spend(user_id, response_cost):
            SPEND[user_id] = response_cost + SPEND.get(user_id, 0)
        """,
        "track_spend",
        V.UNSAFE,
        {K.ACCOUNT_STATE},
        "`d[k] = d.get(k, 0) + v` on a money name (the catalogue's [[augassign]] vocabulary: "
        "balance, credit, spend, budget, cost, quota, stock...) is a running total flushed later: "
        "a retry counts the same cost twice.",
        evidence_mentions="SPEND[user_id] = response_cost + SPEND.get(user_id, 0): adds to an amount",
    ),
    example(
        "unsafe: a money column incremented by the database",
        """
        def add_spend(client, user_id, response_cost):
            client.usertable.update_many(
                where={"user_id": user_id}, data={"spend": {"increment": response_cost}}
            )
        """,
        "add_spend",
        V.UNSAFE,
        {K.ACCOUNT_STATE},
        '`{"spend": {"increment": x}}` (Prisma) or `update(balance=F("balance") + x)` (Django) '
        "grows a stored amount in place, whatever client runs it.",
        evidence_mentions="client.usertable.update_many: increments the money column spend",
    ),
    example(
        "unsafe: a money field reset on loaded rows",
        """
        def reset_budgets(keys, store):
            for key in keys:
                key.spend = 0.0
            store.save_all(keys)
        """,
        "reset_budgets",
        V.UNSAFE,
        {K.ACCOUNT_STATE},
        "Setting a money or quota field is business state: run again later, the reset wipes "
        "what was spent in between.",
    ),
    example(
        "unsafe: a method of a billing model that writes its row",
        """
        from shop.models import Invoice

        def settle(invoice_id):
            Invoice.objects.get(pk=invoice_id).mark_paid()
        """,
        "settle",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.DB_OVERWRITE, K.DB_READ},
        "The row loaded by `.get()` is an `Invoice`, so `mark_paid` is followed; a write made by a "
        "method of a billing, invoice, payment, wallet, voucher or subscription model is business "
        "state.",
        more_files={
            "shop/models.py": (
                "from django.db import models\n\n"
                "class Invoice(models.Model):\n"
                "    def mark_paid(self):\n"
                "        self.paid = True\n"
                "        self.save()\n"
            )
        },
    ),
    example(
        "unsafe: a billing model method saving itself through its own save() override",
        """
        from shop.models import Subscription

        def renew(subscription_id):
            Subscription.objects.get(pk=subscription_id).renew()
        """,
        "renew",
        V.UNSAFE,
        {K.ACCOUNT_STATE, K.DB_OVERWRITE, K.DB_READ},
        "`self.save()` runs the project's `save` override, so the write shows up one call down; "
        "the call itself, made by a method of a billing model, is what marks business state.",
        more_files={
            "shop/models.py": (
                "from django.db import models\n\n"
                "class Subscription(models.Model):\n"
                "    def save(self, *args, **kwargs):\n"
                "        super().save(*args, **kwargs)\n\n"
                "    def renew(self):\n"
                "        self.active = True\n"
                "        self.save()\n"
            )
        },
    ),
]
