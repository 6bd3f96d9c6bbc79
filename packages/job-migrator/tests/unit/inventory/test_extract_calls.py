"""Call targets, receivers, literal arguments, result_used and uses_param."""

from __future__ import annotations

import textwrap

from inventory._extract import extract_source
from inventory.summary import CallInfo, FileSummary, ReceiverKind


def summarise(source: str, module: str = "shop.views") -> FileSummary:
    return extract_source(textwrap.dedent(source), "shop/views.py", module)


def calls_of(summary: FileSummary, qualname: str) -> dict[str, CallInfo]:
    function = next(f for f in summary.functions if f.qualname == qualname)
    return {call.target: call for call in function.calls}


def test_receiver_kinds() -> None:
    summary = summarise(
        """
        import httpx
        import requests
        from .models import Order
        from .mail import Mailer

        class Shop:
            def __init__(self):
                self.client = httpx.Client()

            def refresh(self): ...

            def checkout(self, obj):
                self.refresh()
                self.client.post("https://pay")
                m = Mailer()
                m.send()
                requests.post("https://hook")
                Order.objects.create(total=1)
                obj.save()
        """
    )
    calls = calls_of(summary, "shop.views.Shop.checkout")
    assert calls["shop.views.Shop.refresh"].receiver is ReceiverKind.SELF
    assert calls["httpx.Client.post"].receiver is ReceiverKind.INSTANCE
    assert calls["httpx.Client.post"].receiver_source == "self.client"
    assert calls["shop.mail.Mailer.send"].receiver is ReceiverKind.INSTANCE
    assert calls["requests.post"].receiver is ReceiverKind.MODULE
    assert calls["shop.models.Order.objects.create"].receiver is ReceiverKind.CLASS
    assert calls["?.save"].receiver is ReceiverKind.UNKNOWN
    assert calls["?.save"].receiver_source == "obj"


def test_annotated_parameter_types_the_receiver() -> None:
    summary = summarise(
        """
        from fastapi import BackgroundTasks

        def view(bt: BackgroundTasks, client: "httpx.Client | None" = None):
            bt.add_task(print)
        """
    )
    call = calls_of(summary, "shop.views.view")["fastapi.BackgroundTasks.add_task"]
    assert call.receiver is ReceiverKind.INSTANCE


def test_attribute_assigned_from_an_annotated_init_parameter() -> None:
    summary = summarise(
        """
        import stripe

        class Payments:
            def __init__(self, api: stripe.StripeClient):
                self.api = api

            def refund(self, charge_id):
                self.api.refunds.create(charge=charge_id)
        """
    )
    assert "stripe.StripeClient.refunds.create" in calls_of(summary, "shop.views.Payments.refund")


def test_builtins_locals_and_chains() -> None:
    summary = summarise(
        """
        from .models import Order

        def helper(): ...

        def view(order_id):
            open("/tmp/x", "w")
            helper()
            Order.objects.filter(id=order_id).update(paid=True)
            later()

        def later(): ...
        """
    )
    calls = calls_of(summary, "shop.views.view")
    assert set(calls) >= {
        "shop.views.open",  # builtins follow the contract: qualified with the module
        "shop.views.helper",
        "shop.models.Order.objects.filter().update",
        "shop.models.Order.objects.filter",
        "shop.views.later",
    }


def test_super_resolves_to_the_first_base() -> None:
    summary = summarise(
        """
        from django.db import models

        class Order(models.Model):
            def save(self, *args, **kwargs):
                super().save(*args, **kwargs)
        """
    )
    call = calls_of(summary, "shop.views.Order.save")["django.db.models.Model.save"]
    assert call.receiver is ReceiverKind.SELF


def test_module_aliases_are_followed() -> None:
    summary = summarise(
        """
        from . import mail
        send = mail.send_email

        def view():
            send("a@b")
        """
    )
    assert "shop.mail.send_email" in calls_of(summary, "shop.views.view")


def test_local_rebinding_shadows_imports() -> None:
    summary = summarise(
        """
        import requests

        def view(session):
            requests = session
            requests.post("x")
        """
    )
    assert "?.post" in calls_of(summary, "shop.views.view")


def test_literal_arguments_and_sources() -> None:
    summary = summarise(
        """
        def view(user):
            charge(user.id, 100, -5, None, True, amount=2.5, key=f"{user.id}", **extra)
        """
    )
    call = summary.functions[0].calls[0]
    assert call.args == ["<expr>", 100, -5, None, True]
    assert call.arg_sources == ["user.id", "100", "-5", "None", "True"]
    assert call.kwargs == {"amount": 2.5, "key": "<expr>", "**": "<expr>"}
    assert call.kwarg_sources["key"] == 'f"{user.id}"'


def test_result_used() -> None:
    summary = summarise(
        """
        async def view(x):
            log(x)
            await send(x)
            y = compute(x)
            z = await fetch(x)
            return render(y, z)
        """
    )
    used = {c.target.rpartition(".")[2]: c.result_used for c in summary.functions[0].calls}
    assert used == {"log": False, "send": False, "compute": True, "fetch": True, "render": True}


def test_uses_param_lists_parameters_the_arguments_mention() -> None:
    summary = summarise(
        """
        def view(request, order_id, self_note):
            charge(order_id, note=str(self_note), when=now())
            request.session.save()
        """
    )
    calls = calls_of(summary, "shop.views.view")
    assert calls["shop.views.charge"].uses_param == ["order_id", "self_note"]
    assert calls["shop.views.str"].uses_param == ["self_note"]
    assert calls["?.save"].uses_param == []


def test_calls_in_nested_functions_belong_to_them() -> None:
    summary = summarise(
        """
        def outer():
            def inner():
                deliver()
            prepare()
            return inner
        """
    )
    outer = calls_of(summary, "shop.views.outer")
    inner = calls_of(summary, "shop.views.outer.<locals>.inner")
    assert list(outer) == ["shop.views.prepare"]
    assert list(inner) == ["shop.views.deliver"]


def test_module_and_class_body_calls_are_module_calls() -> None:
    summary = summarise(
        """
        import logging
        logger = logging.getLogger(__name__)

        class Order:
            objects = Manager()
        """
    )
    assert [c.target for c in summary.module_calls] == ["logging.getLogger", "shop.views.Manager"]


def test_calls_through_unknown_values() -> None:
    summary = summarise(
        """
        def view(hook, handlers, kind):
            hook(1)
            handlers[kind]()
        """
    )
    targets = [(c.target, c.receiver, c.receiver_source) for c in summary.functions[0].calls]
    assert targets == [
        ("?.__call__", ReceiverKind.UNKNOWN, "hook"),
        ("?.__call__", ReceiverKind.UNKNOWN, "handlers[kind]"),
    ]


def test_library_factories_type_their_results() -> None:
    summary = summarise(
        """
        from PIL import Image

        def thumb(src, dest):
            with Image.open(src) as img:
                img.thumbnail((64, 64))
                img.save(dest, format="PNG")
            with dest.open("w") as out:
                out.write("done")
        """
    )
    targets = [c.target for c in summary.functions[0].calls]
    assert "PIL.Image.Image.save" in targets
    assert "PIL.Image.Image.thumbnail" in targets
    assert "io.IOBase.write" in targets


def test_local_copies_keep_their_type() -> None:
    summary = summarise(
        """
        import httpx
        from concurrent.futures import ThreadPoolExecutor

        class Service:
            def __init__(self):
                self.http = httpx.Client()
                self.pool = ThreadPoolExecutor()

            def run(self, client: httpx.AsyncClient):
                http = self.http
                http.get("x")
                other = client
                other.post("y")
                pool = self.pool
                pool.submit(print)
        """
    )
    calls = calls_of(summary, "shop.views.Service.run")
    assert calls["httpx.Client.get"].receiver is ReceiverKind.INSTANCE
    assert calls["httpx.AsyncClient.post"].receiver is ReceiverKind.INSTANCE
    (site,) = summary.sites
    assert site.target == "shop.views.print"
