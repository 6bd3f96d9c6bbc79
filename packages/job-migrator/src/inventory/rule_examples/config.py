"""[tool.migrator]: pinned verdicts, declared keys, catalogue additions."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

EXAMPLES: list[RuleExample] = [
    example(
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
    example(
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
    example(
        "declared key function in [tool.migrator.jobs]",
        """
        from django.core.mail import send_mail

        def send_welcome(user_id):
            send_mail("Welcome", "Hello", "shop@example.com", ["u@example.com"])
        """,
        "send_welcome",
        V.NEEDS_KEY,
        {K.EMAIL_SEND},
        "The key is computed by a function of the job's arguments; `migrator apply` calls it at each site.",
        pyproject='[tool.migrator.jobs."shop.jobs.send_welcome"]\nkey = "shop.keys:welcome_key"\n',
        evidence_mentions="key function 'shop.keys:welcome_key'",
    ),
    example(
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
