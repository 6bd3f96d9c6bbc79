"""Call sites: global resolution of raw sites, DIRECT_CALL detection, fingerprints, ordering."""

from __future__ import annotations

from inventory._extract import extract_source
from inventory.models import Framework, Idempotency, Pattern
from inventory.summary import ClassInfo, RawSite, Span, TargetKind
from tests.unit.inventory.classify_builders import call, fn, module, run, thread_site

VIEW = {"handler": Framework.DJANGO, "params": ["request"]}


def test_direct_call_to_a_slow_project_function_reports_the_callee() -> None:
    views = module(
        "shop.views",
        fn(
            "shop.views.checkout",
            call("shop.mail.send_receipt", line=5, arg_sources=["order.id"], args=["<expr>"]),
            **VIEW,
        ),
        fn("shop.views.index", call("shop.mail.fmt", line=9), line=8, **VIEW),
    )
    mail = module(
        "shop.mail",
        fn(
            "shop.mail.send_receipt",
            call("django.core.mail.send_mail", line=2),
            params=["order_id"],
        ),
        fn("shop.mail.fmt", call("json.dumps"), line=4),
    )
    sites, jobs = run(views, mail)
    assert [(s.pattern, s.job, s.enclosing_function) for s in sites] == [
        (Pattern.DIRECT_CALL, "shop.mail.send_receipt", "shop.views.checkout")
    ]
    site = sites[0]
    assert site.handler == Framework.DJANGO and site.idempotency == Idempotency.NON_IDEMPOTENT
    assert site.arguments[0].source == "order.id" and site.location.line == 5
    assert [j.qualname for j in jobs] == ["shop.mail.send_receipt"]


def test_inline_slow_api_in_a_handler_reports_the_handler_once() -> None:
    view = fn(
        "shop.views.pay",
        call("requests.post", line=3),
        call("requests.post", line=4),
        call("stripe.Charge.create", line=5),
        **VIEW,
    )
    sites, jobs = run(module("shop.views", view))
    assert [(s.job, s.target_source, s.location.line) for s in sites] == [
        ("shop.views.pay", "requests.post", 3)
    ]
    assert jobs[0].idempotency == Idempotency.UNSAFE


def test_dynamic_and_external_targets_are_unknown_with_a_reason() -> None:
    summary = module(
        "app",
        fn("app.view"),
        sites=[
            thread_site(None, "app.view", line=2),
            thread_site("requests.post", "app.view", line=3),
        ],
    )
    sites, jobs = run(summary)
    # A library callable as the target is a one-line job named by it (see
    # test_library_job.py): the catalogue says what it does; apply has nothing to move.
    assert [s.job for s in sites] == ["unknown", "requests.post"]
    assert "run time" in sites[0].unresolved_reason
    assert sites[1].unresolved_reason == (
        "requests.post: no project function to move: wrap it in one"
    )
    assert [(j.qualname, j.location) for j in jobs] == [("requests.post", None)]


def thread_class(bases: list[str]) -> list[RawSite | ClassInfo]:
    site = RawSite(
        pattern=Pattern.THREAD,
        span=Span(line=9),
        target="app.Worker",
        target_kind=TargetKind.THREAD_SUBCLASS,
        enclosing_function="app.view",
    )
    cls = ClassInfo(
        qualname="app.Worker", name="Worker", span=Span(line=1), bases=bases, methods=["run"]
    )
    return [site, cls]


def test_thread_subclass_runs_its_run_method_only_if_it_is_a_thread() -> None:
    body = [
        fn("app.Worker.run", call("time.sleep"), is_method=True, class_name="Worker"),
        fn("app.view"),
    ]
    site, cls = thread_class(["threading.Thread"])
    sites, jobs = run(module("app", *body, sites=[site], classes=[cls]))
    assert [s.job for s in sites] == ["app.Worker.run"] and jobs[0].qualname == "app.Worker.run"
    site, cls = thread_class(["object"])
    assert run(module("app", *body, sites=[site], classes=[cls]))[0] == []


def test_fingerprints_survive_line_moves_and_separate_twins() -> None:
    def sites_at(offset: int) -> list[str]:
        sites = [
            thread_site("app.job", "app.view", line=offset + 1),
            thread_site("app.job", "app.view", line=offset + 2),
        ]
        found, _ = run(module("app", fn("app.job"), fn("app.view"), sites=sites))
        return [s.fingerprint for s in found]

    first = sites_at(0)
    assert first == sites_at(40) and len(set(first)) == 2 and all(len(f) == 16 for f in first)


def test_output_is_sorted_and_independent_of_input_order() -> None:
    a = module("a", fn("a.job"), fn("a.view"), sites=[thread_site("a.job", "a.view")])
    b = module(
        "b",
        fn("b.job", call("requests.post")),
        fn("b.view"),
        sites=[thread_site("b.job", "b.view")],
    )
    assert run(a, b) == run(b, a)
    sites, jobs = run(b, a)
    assert [s.location.path for s in sites] == ["a.py", "b.py"] and [j.qualname for j in jobs] == [
        "a.job",
        "b.job",
    ]


def test_pins_may_name_a_job_through_a_re_export() -> None:
    from inventory.config import JobSetting, MigratorConfig

    pkg = module("shop", is_package=True, imports={"send": "shop.mail.send"})
    mail = module("shop.mail", fn("shop.mail.send", call("smtplib.SMTP.sendmail")))
    views = module(
        "shop.views", fn("shop.views.view"), sites=[thread_site("shop.send", "shop.views.view")]
    )
    pin = JobSetting(idempotency=Idempotency.IDEMPOTENT, reason="deduplicated by the mail relay")
    _, jobs = run(pkg, mail, views, config=MigratorConfig(jobs={"shop.send": pin}))
    assert [(j.qualname, j.idempotency, j.pinned) for j in jobs] == [
        ("shop.mail.send", Idempotency.IDEMPOTENT, True)
    ]


HANDLER_WITH_SITES = """
import asyncio
import requests
from fastapi import FastAPI

app = FastAPI()


async def notify(order_id):
    requests.post("https://hooks.example.com", json={"id": order_id})


@app.post("/orders")
async def create(order_id: int):
    asyncio.create_task(notify(order_id))
    await notify(order_id)
    return {}
"""


def test_a_call_handed_to_another_site_is_not_also_a_direct_call() -> None:
    sites, _ = run(extract_source(HANDLER_WITH_SITES, "app.py", "app", False))
    assert [(s.location.line, s.pattern, s.job) for s in sites] == [
        (15, Pattern.ASYNCIO_TASK, "app.notify"),
        (16, Pattern.DIRECT_CALL, "app.notify"),
    ]
