"""Classification examples: each verdict rule shown on small multi-file sources.

These examples are the documentation of the classifier *and* its tests:
``tests/unit/inventory/test_rule_examples.py`` runs every example through the
real extractor and classifier, and ``python -m inventory.rule_examples``
renders them as Markdown.
"""

from __future__ import annotations

from textwrap import dedent

from pydantic import BaseModel, Field

from inventory.models import EffectKind, Idempotency

K = EffectKind
V = Idempotency


class RuleExample(BaseModel):
    title: str
    files: dict[str, str] = Field(
        description="POSIX path -> source; dedented when rendered and run."
    )
    job: str = Field(description="Qualified name of the job whose verdict is checked.")
    expected_verdict: Idempotency
    expected_effect_kinds: set[EffectKind]
    why: str
    pyproject: str = Field(
        default="", description="The scanned project's pyproject.toml, if it matters."
    )
    evidence_mentions: str = Field(default="", description="Text one evidence line must contain.")

    def sources(self) -> dict[str, str]:
        return {path: dedent(text).lstrip() for path, text in self.files.items()}


def _starter(module: str, name: str) -> str:
    """A request handler that runs ``name`` in a thread: what makes it a job."""
    return f"""
        import threading
        from {module} import {name}

        def view(request):
            threading.Thread(target={name}, args=(request.user.id,)).start()
    """


def _example(
    title: str,
    job_source: str,
    job: str,
    verdict: Idempotency,
    kinds: set[EffectKind],
    why: str,
    **extra: object,
) -> RuleExample:
    """A one-module job in ``shop/jobs.py`` started from ``shop/views.py``."""
    files = {
        "shop/__init__.py": "",
        "shop/jobs.py": job_source,
        "shop/views.py": _starter("shop.jobs", job),
    }
    files.update(extra.pop("more_files", {}))  # type: ignore[arg-type]
    return RuleExample.model_validate(
        {"title": title, "files": files, "job": f"shop.jobs.{job}", "expected_verdict": verdict}
        | {"expected_effect_kinds": kinds, "why": why, **extra}
    )


_GATEWAY = """\
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
    _example(
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
    _example(
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
    _example(
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
    _example(
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
    _example(
        "non_idempotent: a notification, with a suggested dedup key",
        """
        from django.core.mail import send_mail

        def send_welcome(user_id):
            send_mail("Welcome", "Hello", "shop@example.com", ["u@example.com"])
        """,
        "send_welcome",
        V.NON_IDEMPOTENT,
        {K.EMAIL_SEND},
        "A retry sends a second email; a dedup key like `shop.jobs.send_welcome:{user_id}` is suggested.",
    ),
    _example(
        "needs_key: an insert whose only risk is a duplicate, with a natural key",
        """
        from shop.models import Delivery

        def record_delivery(order_id, delivery_key):
            Delivery.objects.create(order_id=order_id, delivery_key=delivery_key)
        """,
        "record_delivery",
        V.NEEDS_KEY,
        {K.DB_INSERT},
        "`delivery_key` comes from the inputs and names the event: a unique constraint or "
        "`get_or_create` on it makes a retry harmless. Foreign keys such as `order_id` do not count.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Delivery(models.Model):\n    pass\n"
        },
    ),
    _example(
        "non_idempotent: an increment through F()",
        """
        from django.db.models import F
        from shop.models import Post

        def count_view(post_id):
            Post.objects.filter(pk=post_id).update(views=F("views") + 1)
        """,
        "count_view",
        V.NON_IDEMPOTENT,
        {K.DB_INCREMENT, K.DB_READ},
        "`F('views') + 1` adds one per run.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Post(models.Model):\n    pass\n"
        },
    ),
    _example(
        "non_idempotent: raw SQL INSERT; idempotent: INSERT ... ON CONFLICT",
        """
        def audit(conn, event_id):
            cursor = conn.cursor()
            cursor.execute("INSERT INTO audit (event) VALUES (%s)", [event_id])
        """,
        "audit",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "SQL text is classified: a plain INSERT adds a row per run.",
    ),
    _example(
        "idempotent: an upsert by a natural key",
        """
        import requests
        from shop.models import Profile

        def sync_profile(user_id):
            data = requests.get(f"https://crm.example.com/users/{user_id}").json()
            Profile.objects.update_or_create(user_id=user_id, defaults=data)
        """,
        "sync_profile",
        V.IDEMPOTENT,
        {K.HTTP_GET, K.DB_UPSERT},
        "A GET and an upsert converge to the same state however often they run.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Profile(models.Model):\n    pass\n"
        },
    ),
    _example(
        "idempotent: a file overwritten at a path derived from the inputs",
        """
        def export(report_id):
            with open(f"/srv/reports/{report_id}.txt", "w") as out:
                out.write("done")
        """,
        "export",
        V.IDEMPOTENT,
        {K.FILE_WRITE},
        "Mode 'w' replaces the file; mode 'a' would append on every retry.",
    ),
    _example(
        "idempotent: no effect at all (medium confidence)",
        """
        def compute(n):
            return sum(range(n))
        """,
        "compute",
        V.IDEMPOTENT,
        set(),
        "Nothing found in the reachable code; confidence is not high because absence is weaker evidence.",
    ),
    _example(
        "idempotent: an in-memory counter is noted, not counted",
        """
        import requests

        STATS = {}

        def refresh(feed_id):
            requests.get(f"https://feeds.example.com/{feed_id}")
            STATS[feed_id] = STATS.get(feed_id, 0)
            STATS[feed_id] += 1
        """,
        "refresh",
        V.IDEMPOTENT,
        {K.HTTP_GET},
        "Module state is not persisted, so a retry changes nothing durable; the evidence still "
        "says that a worker process would update its own copy of `STATS`.",
        evidence_mentions="in-memory state",
    ),
    _example(
        "unknown: dynamic dispatch",
        """
        import requests

        HANDLERS = {}

        def route(kind):
            requests.get("https://example.com/ping")
            HANDLERS[kind](kind)
        """,
        "route",
        V.UNKNOWN,
        {K.HTTP_GET, K.DYNAMIC_CALL},
        "The callee of `HANDLERS[kind](...)` is only known at run time: we say what is missing.",
    ),
    _example(
        "effects two calls deep, across modules",
        """
        from shop.helpers import notify

        def close_order(order_id):
            notify(order_id)
        """,
        "close_order",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "The POST is two calls below the job; its evidence carries the chain job -> notify -> post_webhook.",
        more_files={
            "shop/helpers.py": (
                "import requests\n\n"
                "def notify(order_id):\n    post_webhook(order_id)\n\n"
                "def post_webhook(order_id):\n    requests.post('https://hooks.example.com', json={'id': order_id})\n"
            )
        },
    ),
    _example(
        "recursion terminates",
        """
        from shop.models import Node

        def copy_tree(node_id, depth=0):
            Node.objects.create(parent_id=node_id)
            if depth < 3:
                copy_tree(node_id, depth + 1)
        """,
        "copy_tree",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "Recursive calls reach a fixpoint; the insert is found once.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Node(models.Model):\n    pass\n"
        },
    ),
    RuleExample(
        title="re-exports: a job imported through the package __init__",
        files={
            "shop/__init__.py": "from .mail import send_receipt\n",
            "shop/mail.py": "import smtplib\n\ndef send_receipt(order_id):\n    smtplib.SMTP('localhost').sendmail('a@x', ['b@x'], 'paid')\n",
            "shop/views.py": _starter("shop", "send_receipt"),
        },
        job="shop.mail.send_receipt",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.EMAIL_SEND},
        why="`from shop import send_receipt` resolves through `shop/__init__.py` to `shop.mail.send_receipt`.",
    ),
    RuleExample(
        title="bound methods: a thread running obj.method",
        files={
            "shop/__init__.py": "",
            "shop/mail.py": "import requests\n\nclass Mailer:\n    def send(self, user_id):\n        requests.post('https://mail.example.com', json={'to': user_id})\n",
            "shop/views.py": (
                "import threading\nfrom shop.mail import Mailer\n\n"
                "def view(request):\n    mailer = Mailer()\n    threading.Thread(target=mailer.send, args=(1,)).start()\n"
            ),
        },
        job="shop.mail.Mailer.send",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`mailer = Mailer()` types the receiver, so `mailer.send` is `shop.mail.Mailer.send`.",
    ),
    _example(
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
        more_files={"shop/gateway.py": _GATEWAY},
    ),
    _example(
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
        more_files={"shop/gateway.py": _GATEWAY},
    ),
    _example(
        "pinned verdict in [tool.migrator.jobs]",
        """
        import requests

        def rebuild(index_id):
            requests.post(f"https://search.example.com/{index_id}/rebuild")
        """,
        "rebuild",
        V.IDEMPOTENT,
        {K.HTTP_POST},
        "The search service rebuilds from scratch, which the scanner cannot know: a reviewer pinned it, with a reason.",
        pyproject='[tool.migrator.jobs."shop.jobs.rebuild"]\nidempotency = "idempotent"\nreason = "rebuild is a full replace (reviewed)"\n',
        evidence_mentions="rebuild is a full replace",
    ),
    _example(
        "declared key in [tool.migrator.jobs]",
        """
        from django.core.mail import send_mail

        def send_welcome(user_id):
            send_mail("Welcome", "Hello", "shop@example.com", ["u@example.com"])
        """,
        "send_welcome",
        V.NEEDS_KEY,
        {K.EMAIL_SEND},
        "The team declared the dedup key the queue will enforce; the job is safe only with it.",
        pyproject='[tool.migrator.jobs."shop.jobs.send_welcome"]\nkey = "welcome:{user_id}"\n',
        evidence_mentions="welcome:{user_id}",
    ),
    _example(
        "user catalogue additions: an in-house payment client",
        """
        from acme.billing import Gateway

        def settle(invoice_id):
            Gateway.settle(invoice_id)
        """,
        "settle",
        V.UNSAFE,
        {K.PAYMENT},
        "`acme.billing.Gateway.settle` is unknown to the shipped catalogue; the project declares it moves money.",
        pyproject='[[tool.migrator.catalogue.effect]]\ncall = "acme.billing.Gateway.settle"\neffect = "payment"\nkeyed_by = "key"\n',
    ),
]


def render_markdown() -> str:
    """The examples as a Markdown page: title, why, sources, expected verdict."""
    parts = ["# How `migrator scan` classifies jobs\n"]
    for example in EXAMPLES:
        kinds = ", ".join(sorted(k.value for k in example.expected_effect_kinds)) or "none"
        parts.append(
            f"## {example.title}\n\n{example.why}\n\nJob `{example.job}`: **{example.expected_verdict.value}** (effects: {kinds})\n"
        )
        if example.pyproject:
            parts.append(f"pyproject.toml:\n\n```toml\n{example.pyproject}```\n")
        parts += [
            f"`{path}`:\n\n```python\n{source}```\n"
            for path, source in example.sources().items()
            if source.strip()
        ]
    return "\n".join(parts)


if __name__ == "__main__":
    print(render_markdown())
