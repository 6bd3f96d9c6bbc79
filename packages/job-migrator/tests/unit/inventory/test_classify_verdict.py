"""Verdict rules on hand-built summaries (the rule examples cover the same through the extractor)."""

from __future__ import annotations

from inventory.config import JobSetting, MigratorConfig
from inventory.models import Confidence, EffectKind, Idempotency, Job
from inventory.summary import Fact, FactKind, FunctionInfo, Span
from tests.unit.inventory.classify_builders import call, fn, job_of, module, run, thread_site


def verdict(*body: FunctionInfo, config: MigratorConfig | None = None) -> Job:
    """Classify ``body[0]`` as the job of a thread site."""
    sites = [thread_site(body[0].qualname, "app.view", line=99)]
    _, jobs = run(module("app", *body, sites=sites), config=config)
    return job_of(jobs, body[0].qualname)


def refund(key_source: str | None, params: tuple[str, ...] = ("order_id",)) -> FunctionInfo:
    fields: dict[str, object] = {}
    if key_source is not None:
        fields = {
            "kwargs": {"idempotency_key": "<expr>"},
            "kwarg_sources": {"idempotency_key": key_source},
        }
    return fn("app.refund", call("stripe.Refund.create", line=3, **fields), params=list(params))


def test_unkeyed_payment_is_unsafe_with_a_money_message() -> None:
    job = verdict(refund(None))
    assert job.idempotency == Idempotency.UNSAFE and job.confidence == Confidence.HIGH
    assert "without idempotency_key: money may move twice" in job.evidence[0].message


def test_payment_keyed_by_an_input_needs_the_key() -> None:
    job = verdict(refund('f"refund-{order_id}"'))
    assert job.idempotency == Idempotency.NEEDS_KEY
    assert job.effects[0].keyed


def test_key_minted_with_uuid4_does_not_count_and_says_so() -> None:
    job = verdict(refund("str(uuid.uuid4())"))
    assert job.idempotency == Idempotency.UNSAFE
    assert "minted inside the job" in job.evidence[0].message


def test_unsafe_wins_over_dynamic_calls() -> None:
    dyn = Fact(kind=FactKind.DYNAMIC_DISPATCH, span=Span(line=4), text="getattr(self, name)()")
    body = fn("app.refund", call("stripe.Refund.create", line=3), facts=[dyn])
    assert verdict(body).idempotency == Idempotency.UNSAFE


def test_dynamic_dispatch_makes_an_otherwise_safe_job_unknown() -> None:
    dyn = Fact(kind=FactKind.DYNAMIC_DISPATCH, span=Span(line=4), text="handlers[kind](payload)")
    job = verdict(fn("app.route", call("requests.get", line=3), facts=[dyn]))
    assert job.idempotency == Idempotency.UNKNOWN and job.confidence == Confidence.LOW
    assert "handlers[kind](payload)" in job.evidence[-1].message


def test_notifications_are_non_idempotent_with_a_suggested_key() -> None:
    job = verdict(
        fn("app.welcome", call("django.core.mail.send_mail", line=2), params=["request", "user_id"])
    )
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    # Issue 12: "request" is not shown to leave the effect alone: every argument is digested.
    assert job.suggested_key == "app.welcome:{+}"  # one key per call: never merges two mails


def test_no_suggested_key_when_other_repeats_exist() -> None:
    body = fn(
        "app.signup",
        call("django.core.mail.send_mail"),
        call("?.create", receiver_source="User.objects"),
    )
    job = verdict(body)
    assert job.idempotency == Idempotency.NON_IDEMPOTENT and job.suggested_key is None
    assert job.confidence == Confidence.MEDIUM  # the ORM match is a suffix heuristic


def test_reads_and_overwrites_are_idempotent() -> None:
    body = fn("app.sync", call("requests.get"), call("?.save", receiver_source="profile"))
    assert verdict(body).idempotency == Idempotency.IDEMPOTENT


def test_no_effect_is_idempotent_with_medium_confidence() -> None:
    job = verdict(fn("app.noop", call("json.dumps")))
    assert (job.idempotency, job.confidence) == (Idempotency.IDEMPOTENT, Confidence.MEDIUM)


def test_unresolved_project_calls_make_an_idempotent_job_unknown() -> None:
    # Soundness rule (issue 10): was IDEMPOTENT with LOW confidence, a verdict resting on a gap.
    job = verdict(fn("app.sync", call("requests.get"), call("app.not_defined_anywhere")))
    assert (job.idempotency, job.confidence) == (Idempotency.UNKNOWN, Confidence.LOW)
    assert "app.not_defined_anywhere" in job.evidence[-2].message
    assert [e.api for e in job.effects] == ["requests.get"]


def test_random_id_matters_only_when_stored() -> None:
    assert (
        verdict(fn("app.a", call("uuid.uuid4"), call("requests.get"))).idempotency
        == Idempotency.IDEMPOTENT
    )
    stored = fn("app.b", call("uuid.uuid4"), call("?.save", receiver_source="order"))
    assert verdict(stored).idempotency == Idempotency.NON_IDEMPOTENT


def test_pinned_verdict_overrides_with_its_reason() -> None:
    config = MigratorConfig(
        jobs={
            "app.refund": JobSetting(idempotency=Idempotency.IDEMPOTENT, reason="dedup in gateway")
        }
    )
    job = verdict(refund(None), config=config)
    assert job.pinned and job.idempotency == Idempotency.IDEMPOTENT
    assert "dedup in gateway" in job.evidence[-1].message


def test_declared_key_makes_a_sender_needs_key() -> None:
    config = MigratorConfig(jobs={"app.welcome": JobSetting(key="welcome:{user_id}")})
    job = verdict(
        fn("app.welcome", call("django.core.mail.send_mail"), params=["user_id"]), config=config
    )
    assert (
        job.idempotency == Idempotency.NEEDS_KEY and "welcome:{user_id}" in job.evidence[-1].message
    )


def test_money_word_on_a_project_wrapper_only_when_its_body_shows_no_payment() -> None:
    keyed_stripe = call(
        "stripe.Charge.create",
        line=2,
        kwargs={"idempotency_key": "<expr>"},
        kwarg_sources={"idempotency_key": "f'c-{order_id}'"},
    )
    job_body = fn("app.job", call("billing.charge", line=9), params=["order_id"])
    site = thread_site("app.job", "app.view", line=99)

    def classify_with(wrapper: FunctionInfo) -> Job:
        _, jobs = run(module("app", job_body, sites=[site]), module("billing", wrapper))
        return job_of(jobs, "app.job")

    job = classify_with(fn("billing.charge", keyed_stripe, params=["order_id"]))
    assert [e.api for e in job.effects] == ["stripe.Charge.create"]
    assert job.idempotency == Idempotency.NEEDS_KEY

    job = classify_with(fn("billing.charge", call("requests.post", line=2), params=["order_id"]))
    assert {e.api for e in job.effects} == {"requests.post", "billing.charge"}
    assert job.idempotency == Idempotency.UNSAFE


def test_a_key_in_a_header_dict_counts_only_under_the_idempotency_header() -> None:
    def post(headers: str) -> FunctionInfo:
        fields = {"kwargs": {"headers": "<expr>"}, "kwarg_sources": {"headers": headers}}
        return fn("app.notify", call("requests.post", **fields), params=["event_id"])

    assert (
        verdict(post('{"Idempotency-Key": f"e-{event_id}"}')).idempotency == Idempotency.NEEDS_KEY
    )
    assert verdict(post('{"X-Trace": event_id}')).idempotency == Idempotency.NON_IDEMPOTENT


def test_a_user_catalogue_entry_for_a_project_function_speaks_for_its_body() -> None:
    from inventory._catalogue import Catalogue, CatalogueSpec, EffectEntry
    from inventory._classify import classify

    client = module(
        "acme", fn("acme.Client.settle", call("requests.post"), params=["self", "invoice_id"])
    )
    job_body = fn(
        "app.job",
        call(
            "acme.Client.settle",
            line=3,
            kwargs={"key": "<expr>"},
            kwarg_sources={"key": "invoice_id"},
        ),
        params=["invoice_id"],
    )
    app = module("app", job_body, sites=[thread_site("app.job", "app.view")])
    entry = EffectEntry(call="acme.Client.settle", effect=EffectKind.PAYMENT, keyed_by="key")
    _, jobs = classify(
        [client, app], MigratorConfig(), Catalogue.load(CatalogueSpec(effect=[entry]))
    )
    job = job_of(jobs, "app.job")
    assert [(e.kind, e.keyed) for e in job.effects] == [(EffectKind.PAYMENT, True)]
    assert job.idempotency == Idempotency.NEEDS_KEY
