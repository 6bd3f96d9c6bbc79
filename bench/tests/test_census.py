"""The census's syntactic sink finder, its attribution buckets and gap ranking, on a tiny
synthetic package written here (never code copied from the census packages)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.census._catalogue import load_sinks
from bench.census._census import overall
from bench.census._coverage import Bucket, attribute, package_files, package_sinks
from bench.census._figures import GapRanking, Shape, figures, shape
from bench.census._finder import MatchHow, find_sinks
from inventory import (
    CallSite,
    Confidence,
    Effect,
    EffectKind,
    Evidence,
    Framework,
    Idempotency,
    Inventory,
    Job,
    Location,
    Pattern,
)
from inventory.models import UnexplainedCall

VIEWS = """\
import smtplib
import requests
import stripe as payments
from django.core.mail import send_mail as notify_by_mail, EmailMessage


def signup(request):
    notify_by_mail("hi", "body", "a@example.com", ["b@example.com"])


def hook(request):
    response = requests.post("https://example.com/hook", json={})
    return response.headers.get("id") or response.json().get("id")


def relay(message):
    smtplib.SMTP("localhost").sendmail("a@example.com", ["b"], message)
    with smtplib.SMTP("localhost") as server:
        server.send_message(message)


def charge(order):
    payments.Charge.create(amount=order.total)


def letter(to):
    msg = EmailMessage("s", "b", to=[to])
    msg.send()


def notify(mailer, member):
    mailer.send_mail("welcome")
    member.send_notice_email()


def harmless(data):
    requests.utils.quote(data)
    data.send("not a mailer")
"""

MODELS = """\
class Member:
    def send_notice_email(self):
        pass
"""


def _line(text: str) -> int:
    return next(i for i, line in enumerate(VIEWS.splitlines(), 1) if text in line)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "views.py").write_text(VIEWS)
    (tmp_path / "app" / "models.py").write_text(MODELS)
    (tmp_path / "app" / "tests").mkdir()
    (tmp_path / "app" / "tests" / "test_views.py").write_text(
        "import requests\nrequests.get('x')\n"
    )
    return tmp_path


def test_the_finder_resolves_aliases_constructors_and_method_names() -> None:
    found = {
        (s.line, s.api, s.kind, s.how) for s in find_sinks(VIEWS, "app/views.py", load_sinks())
    }
    assert found == {
        (
            _line("notify_by_mail("),
            "django.core.mail.send_mail",
            EffectKind.EMAIL_SEND,
            MatchHow.EXACT,
        ),
        (_line("requests.post("), "requests.post", EffectKind.HTTP_POST, MatchHow.EXACT),
        (_line(".sendmail("), "smtplib.SMTP.sendmail", EffectKind.EMAIL_SEND, MatchHow.EXACT),
        (
            _line("server.send_message"),
            "smtplib.SMTP.send_message",
            EffectKind.EMAIL_SEND,
            MatchHow.EXACT,
        ),
        (_line("Charge.create"), "stripe.Charge.create", EffectKind.PAYMENT, MatchHow.EXACT),
        (
            _line("msg.send()"),
            "django.core.mail.EmailMessage.send",
            EffectKind.EMAIL_SEND,
            MatchHow.EXACT,
        ),
        (_line("mailer.send_mail"), "mailer.send_mail", EffectKind.EMAIL_SEND, MatchHow.KEYWORD),
        (
            _line("member.send_notice"),
            "member.send_notice_email",
            EffectKind.EMAIL_SEND,
            MatchHow.KEYWORD,
        ),
    }


SMS = """
class Summariser:
    def summarise(self, text):
        return self.client.messages.create(model="m", max_tokens=10, messages=[text])


def notify(client, phone):
    client.messages.create(to=phone, from_="+15550000", body="shipped")
    client.messages.create(phone, body="again")
    client.messages.create(**send_kwargs)
    client.beta.messages.create(**request_data)
"""


def test_a_sink_the_catalogue_gives_only_when_an_argument_is_passed_needs_it() -> None:
    """``?.messages.create`` is an SMS only when it sends ``to`` someone (Twilio's shape): the
    census counts the analyzer's sinks, so an LLM client's ``messages.create`` is none."""
    found = [(s.line, s.kind) for s in find_sinks(SMS, "app/sms.py", load_sinks())]
    assert found == [(8, EffectKind.SMS_SEND), (9, EffectKind.SMS_SEND), (10, EffectKind.SMS_SEND)]


def test_a_package_skips_tests_and_its_own_methods_named_like_mail(package: Path) -> None:
    sinks = package_sinks(package, package_files(package, None), load_sinks())
    assert {s.path for s in sinks} == {"app/views.py"}
    assert "member.send_notice_email" not in {s.api for s in sinks}  # defined in app/models.py
    assert len(sinks) == 7
    assert {s.function for s in sinks if s.api == "requests.post"} == {"app.views.hook"}


def _at(text: str) -> Location:
    return Location(path="app/views.py", line=_line(text))


def _inventory(handler: Framework | None) -> Inventory:
    """signup's and relay's mail are effects of a job; hook is on its chain, its POST is not."""
    mail = Effect(kind=EffectKind.EMAIL_SEND, location=_at("notify_by_mail("), api="send_mail")
    smtp = Effect(
        kind=EffectKind.EMAIL_SEND,
        location=_at(".sendmail("),
        api="smtplib.SMTP.sendmail",
        chain=["app.views.signup", "app.views.relay"],
    )
    job = Job(
        qualname="app.views.signup",
        idempotency=Idempotency.UNKNOWN,
        confidence=Confidence.LOW,
        effects=[mail, smtp],
        evidence=[
            Evidence(message="calls hook", chain=["app.views.signup", "app.views.hook"]),
            Evidence(
                message="unresolved calls (no source read, not in the catalogue; lower "
                "confidence): ?.dispatch, self.mail.send and 3 more"
            ),
        ],
    )
    site = CallSite(
        location=_at("def signup"),
        pattern=Pattern.DIRECT_CALL,
        job="app.views.signup",
        enclosing_function="app.views.signup",
        handler=handler,
    )
    return Inventory(root="/x", sites=[site], jobs=[job])


def test_attribution_and_the_buckets_of_what_is_missed(package: Path) -> None:
    sinks = package_sinks(package, package_files(package, None), load_sinks())
    coverage = attribute(sinks, _inventory(Framework.DJANGO))
    assert [s.api for s in coverage.attributed] == [
        "django.core.mail.send_mail",
        "smtplib.SMTP.sendmail",
        "smtplib.SMTP.send_message",  # a second mail in relay: the scan reports one per function
    ]
    why = {s.api: b for s, b in coverage.uncovered}
    assert why["requests.post"] == Bucket.REACHED_NOT_RECOGNISED
    assert why["stripe.Charge.create"] == Bucket.NO_ENTRY_POINT
    assert why["mailer.send_mail"] == Bucket.UNRESOLVED_RECEIVER
    assert coverage.share == pytest.approx(3 / 7)


def test_no_handler_means_unknown_framework_and_no_inventory_means_not_scanned(
    package: Path,
) -> None:
    sinks = package_sinks(package, package_files(package, None), load_sinks())
    unknown = attribute(sinks, _inventory(handler=None)).buckets()
    assert unknown == {"unknown_framework": 3, "unresolved_receiver": 1}
    assert attribute(sinks, None).buckets() == {"not_scanned": 7}


def test_a_job_resting_on_one_call_ranks_it_as_a_sole_blocker() -> None:
    def unknown(name: str, calls: list[UnexplainedCall]) -> Job:
        return Job(
            qualname=name,
            idempotency=Idempotency.UNKNOWN,
            confidence=Confidence.LOW,
            unexplained=calls,
        )

    delete = UnexplainedCall(call="instance.file.delete", entry="?.delete", receiver="^x$")
    guessed = UnexplainedCall(call="a.b (behind c.d)")
    one = Inventory(root="/x", jobs=[unknown("a.f", [delete]), unknown("a.g", [guessed])])
    two = Inventory(
        root="/y",
        jobs=[unknown("b.f", [delete]), unknown("b.g", [delete, guessed])],  # two: not sole
    )
    ranking = GapRanking()
    for package, inventory in (("one", one), ("two", two)):
        figs = figures(inventory)
        ranking.add(package, figs.gaps, figs.gaps_hidden, figs.sole)
    rows = overall([], ranking, [])["sole_blockers"]
    assert rows == [
        {"target": "?.delete", "unknown_jobs_decided": 2, "packages": 2},
        {"target": "a.b (behind c.d)", "unknown_jobs_decided": 1, "packages": 1},
    ]


def test_gaps_are_counted_per_blocked_job_and_the_cut_names_are_kept() -> None:
    figs = figures(_inventory(Framework.DJANGO))
    assert figs.gaps == {"?.dispatch": 1, "self.mail.send": 1}
    assert figs.gaps_hidden == 3
    assert figs.unknown_jobs == 1 and figs.sites_per_kloc == 0.0
    assert shape("?.dispatch") == Shape.UNKNOWN_RECEIVER
    assert shape("self.mail.send") == Shape.SELF_ATTRIBUTE
    assert shape("get_client().post") == Shape.CALL_RESULT


SMALL = Path("/work/data/census/djoser-2.3.5")


@pytest.mark.skipif(not SMALL.is_dir(), reason="the census is not fetched here")
def test_the_bench_runs_on_one_small_census_package(tmp_path: Path) -> None:
    out = tmp_path / "census.json"
    command = [sys.executable, "-m", "bench.census", str(SMALL.parent), "--only", SMALL.name]
    command += ["--work", str(tmp_path / "scans"), "--json", str(out), "--timeout", "60"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    import json

    result = json.loads(out.read_text())
    (entry,) = result["packages"]
    assert entry["scan"]["status"] == "ok"
    assert entry["figures"]["lines"] > 1000
    assert result["overall"]["sinks"] == entry["sinks"]["total"]


def _entry(name: str, sinks: int, attributed: int, jobs: int, unknown: int) -> dict[str, object]:
    figures = {"lines": 1000, "sites": jobs, "unknown_sites": unknown, "jobs": jobs}
    return {
        "name": name,
        "scan": {"status": "ok", "seconds": 1.0},
        "sinks": {
            "total": sinks,
            "attributed": attributed,
            "coverage": attributed / sinks,
            "buckets": {},
            "by_kind": {},
        },
        "figures": figures | {"unknown_jobs": unknown},
    }


def test_compare_holds_the_old_run_to_the_packages_the_new_one_scanned() -> None:
    from bench.census._report import compare_table, compared_overall

    packages = [_entry("a-1", 10, 5, 4, 2), _entry("b-1", 10, 0, 6, 6)]
    old = {"packages": packages, "overall": overall(packages, GapRanking(), [])}
    subset = {"packages": [packages[0]], "overall": overall(packages[:1], GapRanking(), [])}

    assert old["overall"]["coverage"] == 0.25
    before = compared_overall(old, {"a-1"})
    assert (before["packages"], before["coverage"], before["jobs"]) == (1, 0.5, 4)
    table = compare_table(old, subset)
    assert "(1 packages)" in str(table.title)
    coverage = next(i for i, c in enumerate(table.columns[0]._cells) if c == "coverage")
    assert table.columns[1]._cells[coverage] == "0.5"  # not the whole old run's 0.25
    # Over the same packages, the old run's own figures are shown as they were.
    assert compared_overall(old, {"a-1", "b-1"}) == old["overall"]
