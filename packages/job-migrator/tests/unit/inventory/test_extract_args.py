"""Can each argument passed to a job be stored as JSON?"""

from __future__ import annotations

import textwrap

from inventory._extract import extract_source
from inventory.models import Argument


def arguments(
    body: str, params: str = "request, order_id, email, user, payload, path"
) -> dict[str, Argument]:
    source = f"""
import threading
from django.shortcuts import get_object_or_404
from .models import Order
from .models import Customer

def job(*args, **kwargs): ...

def view({params}):
{textwrap.indent(textwrap.dedent(body), "    ")}
"""
    summary = extract_source(source, "shop/views.py", "shop.views")
    (site,) = summary.sites
    return {a.source: a for a in site.arguments}


def test_literals_ids_and_text_are_serialisable() -> None:
    found = arguments(
        """
        threading.Thread(target=job, args=(order_id, email, user.id, 3, "x", [order_id, 1], {"k": email})).start()
        """
    )
    assert {source: a.serialisable for source, a in found.items()} == {
        "order_id": True,
        "email": True,
        "user.id": True,
        "3": True,
        '"x"': True,
        "[order_id, 1]": True,
        '{"k": email}': True,
    }
    assert [a.name for a in found.values()] == ["#0", "#1", "#2", "#3", "#4", "#5", "#6"]


def test_request_objects_are_not() -> None:
    found = arguments("threading.Thread(target=job, args=(request, request.user)).start()")
    assert found["request"].serialisable is False
    assert "request" in found["request"].reason
    assert found["request.user"].serialisable is False


def test_orm_instances_are_not() -> None:
    found = arguments(
        """
        order = Order.objects.get(pk=order_id)
        first = Order.objects.filter(user=user).first()
        other = get_object_or_404(Order, pk=order_id)
        threading.Thread(target=job, args=(order, first, other, Order.objects.create(total=1))).start()
        """
    )
    for source in ("order", "first", "other", "Order.objects.create(total=1)"):
        assert found[source].serialisable is False, source
    assert "primary key" in found["order"].reason


def test_sqlalchemy_rows_and_annotated_models_are_not() -> None:
    found = arguments(
        """
        row = session.get(Order, order_id)
        hit = db.query(Order).filter_by(id=order_id).first()
        threading.Thread(target=job, args=(row, hit, customer)).start()
        """,
        params="session, db, order_id, customer: Customer",
    )
    assert found["row"].serialisable is False
    assert found["hit"].serialisable is False
    assert found["customer"].serialisable is False


def test_files_functions_and_self_are_not() -> None:
    found = arguments(
        """
        handle = open(path)
        with open(path) as f:
            threading.Thread(target=job, args=(handle, f, lambda: 1, job)).start()
        """
    )
    assert [a.serialisable for a in found.values()] == [False, False, False, False]


def test_self_is_not() -> None:
    source = """
import threading

class Exporter:
    def run(self, other): ...

    def start(self):
        threading.Thread(target=self.run, args=(self,)).start()
"""
    (site,) = extract_source(source, "x.py", "app").sites
    assert site.arguments[0].serialisable is False


def test_unknown_values_are_none() -> None:
    found = arguments("threading.Thread(target=job, args=(payload, compute(user))).start()")
    assert found["payload"].serialisable is None
    assert found["compute(user)"].serialisable is None


def test_keyword_and_packed_arguments_keep_their_names() -> None:
    found = arguments(
        "threading.Thread(target=job, kwargs={'order_id': order_id, 'note': payload}).start()"
    )
    assert [(a.name, a.serialisable) for a in found.values()] == [
        ("order_id", True),
        ("note", None),
    ]
    packed = arguments("threading.Thread(target=job, args=payload).start()")
    assert packed["payload"].name == "*args"


def test_typed_parameters_that_are_not_data() -> None:
    source = """
import threading
from django.db import models
from fastapi import Request, UploadFile
from sqlalchemy.orm import Session

class Order(models.Model):
    pass

def job(*args): ...

def view(req2: Request, upload: UploadFile, db: Session, order: Order, count: int):
    threading.Thread(target=job, args=(req2, upload, db, order, count)).start()
"""
    (site,) = extract_source(source, "shop/api.py", "shop.api").sites
    verdicts = {a.source: (a.serialisable, a.reason) for a in site.arguments}
    assert verdicts["req2"][0] is False and "request" in verdicts["req2"][1]
    assert verdicts["upload"][0] is False and "uploaded file" in verdicts["upload"][1]
    assert verdicts["db"][0] is False and "session" in verdicts["db"][1]
    assert verdicts["order"][0] is False and "primary key" in verdicts["order"][1]
    assert verdicts["count"] == (True, "")
