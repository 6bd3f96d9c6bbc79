"""Keys as configuration and the notification fast track (issue 6)."""

from __future__ import annotations

import pytest

from inventory.config import JobSetting, MigratorConfig, ScanConfigError, key_function
from inventory.models import Idempotency, Job
from inventory.summary import FunctionInfo
from tests.unit.inventory.classify_builders import call, fn, job_of, module, run, thread_site

MAIL = "django.core.mail.send_mail"


def classify_one(body: FunctionInfo, key: str | None = None) -> Job:
    jobs_table = {body.qualname: JobSetting(key=key)} if key else {}
    config = MigratorConfig(jobs=jobs_table)
    sites = [thread_site(body.qualname, "app.view", line=99)]
    _, jobs = run(module("app", body, sites=sites), config=config)
    return job_of(jobs, body.qualname)


def welcome(*params: str) -> FunctionInfo:
    return fn("app.welcome", call(MAIL, line=2), params=list(params or ("user_id",)))


def test_a_mail_only_job_is_on_the_fast_track_with_a_per_call_key_in_its_evidence() -> None:
    # Issue 22: a key over the argument (the same user asking twice) dropped the second mail
    # for as long as keys are kept; a notification's key is made for each call ({+}).
    job = classify_one(welcome("user_id"))
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert job.fast_track and job.suggested_key == "app.welcome:{+}"
    [line] = [e.message for e in job.evidence if e.message.startswith("notification fast track")]
    assert "email_send" in line and "'app.welcome:{+}'" in line


def test_the_suggested_key_of_several_parameters_is_per_call_too() -> None:
    # Issue 12: a template of "the recipient and the object" merged different mails; issue 22:
    # so does a digest of every argument when the same request comes twice. Never merged.
    job = classify_one(welcome("order_id", "template", "customer_id", "note"))
    assert job.suggested_key == "app.welcome:{+}"


def test_sms_and_push_are_notifications_too() -> None:
    sms = fn("app.text", call("twilio.rest.Client.messages.create", line=2), params=["phone"])
    push = fn("app.push", call("firebase_admin.messaging.send", line=2), params=["device_token"])
    assert classify_one(sms).suggested_key == "app.text:{+}"
    assert classify_one(push).suggested_key == "app.push:{+}"
    assert classify_one(sms).fast_track and classify_one(push).fast_track


def test_a_job_that_also_inserts_is_not_on_the_fast_track() -> None:
    body = fn(
        "app.signup",
        call(MAIL),
        call("?.create", receiver_source="User.objects"),
        params=["user_id"],
    )
    job = classify_one(body)
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert not job.fast_track and job.suggested_key is None


def test_money_is_never_on_the_fast_track() -> None:
    body = fn("app.refund", call(MAIL), call("stripe.Refund.create", line=3), params=["order_id"])
    job = classify_one(body)
    assert job.idempotency is Idempotency.UNSAFE and not job.fast_track


def test_a_declared_key_makes_it_needs_key_and_is_shown_in_the_evidence() -> None:
    job = classify_one(welcome("user_id"), key="welcome:{user_id}")
    assert job.idempotency is Idempotency.NEEDS_KEY
    assert job.declared_key == "welcome:{user_id}"
    assert job.keyless_idempotency is Idempotency.NON_IDEMPOTENT  # apply wants --job for it
    assert job.fast_track
    assert "'welcome:{user_id}'" in job.evidence[-1].message
    assert any("declared key 'welcome:{user_id}'" in e.message for e in job.evidence)


def test_a_declared_key_function_is_accepted_and_shown() -> None:
    job = classify_one(welcome("user_id"), key="app.keys:welcome_key")
    assert job.idempotency is Idempotency.NEEDS_KEY
    assert "key function 'app.keys:welcome_key'" in job.evidence[-1].message


def test_a_declared_key_on_an_idempotent_job_has_no_keyless_verdict_to_remember() -> None:
    body = fn("app.sync", call("requests.get"), params=["user_id"])
    job = classify_one(body, key="sync:{user_id}")
    assert job.idempotency is Idempotency.NEEDS_KEY
    assert job.keyless_idempotency is Idempotency.IDEMPOTENT and not job.fast_track


def test_a_key_field_that_is_not_a_parameter_is_a_clear_config_error() -> None:
    with pytest.raises(
        ScanConfigError, match=r"\{uid\} is not a parameter of app.welcome.*user_id"
    ):
        classify_one(welcome("user_id"), key="welcome:{uid}")


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("welcome", "no {parameter} field"),
        ("welcome:{user_id", "not a valid template"),
        ("welcome:{user_id!r}", "plain parameter names"),
        ("welcome:{user_id:>5}", "plain parameter names"),
    ],
)
def test_a_malformed_key_is_refused_when_the_config_is_read(key: str, message: str) -> None:
    # "welcome:{user.id}" was refused here until issue 12: an attribute path of a
    # parameter is a field now (test_attribute_paths_and_the_digest_are_fields).
    text = f'[tool.migrator.jobs."app.welcome"]\nkey = "{key}"\n'
    with pytest.raises(ScanConfigError, match=r"\[tool.migrator\]") as info:
        MigratorConfig.from_toml(text)
    assert message in str(info.value)


def test_key_function_syntax() -> None:
    assert key_function("shop.keys:welcome") == ("shop.keys", "welcome")
    assert key_function("welcome:{user_id}") is None
    assert key_function("a b:c") is None


def test_attribute_paths_and_the_digest_are_fields() -> None:
    for key in ("welcome:{user.id}", "welcome:{*}", "{*}"):
        text = f'[tool.migrator.jobs."app.welcome"]\nkey = "{key}"\n'
        assert MigratorConfig.from_toml(text).jobs["app.welcome"].key == key
    job = classify_one(welcome("user"), key="welcome:{user.id}")
    assert job.declared_key == "welcome:{user.id}"
    with pytest.raises(ScanConfigError, match=r"\{usr\} is not a parameter"):
        classify_one(welcome("user"), key="welcome:{usr.id}")


def test_a_declared_per_call_key_is_accepted() -> None:
    job = classify_one(welcome("user_id"), key="welcome:{+}")
    assert job.idempotency is Idempotency.NEEDS_KEY and job.declared_key == "welcome:{+}"
