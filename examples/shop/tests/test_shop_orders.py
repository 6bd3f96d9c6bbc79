"""Orders: stock, checkout (payment capture, receipt, audit, plugin hook), refunds."""

from __future__ import annotations

import json

import pytest
from shop.db import connect
from shop.jobs.audit import audit_events
from shop.plugins import HOOKS
from shop.repo import load_product

DAY = "2026-11-29"


def stock_of(settings, product) -> int:
    with connect(settings.database) as conn:
        return load_product(conn, product["id"]).stock


@pytest.fixture
def order(client, settings, user, product, wait_until):
    """A new order of 2 mugs, whose stock decrement has already happened."""
    body = {"user_id": user["id"], "product_id": product["id"], "qty": 2, "day": DAY}
    created = client.post("/orders", json=body)
    assert created.status_code == 201
    wait_until(lambda: stock_of(settings, product) == 8, message="the stock decrement")
    return created.json()


@pytest.fixture
def paid_hook_calls():
    calls: list[dict[str, object]] = []
    HOOKS["order_paid"] = calls.append
    yield calls
    del HOOKS["order_paid"]


def test_an_order_takes_stock_and_goes_on_the_picking_board(client, order, product, wait_until):
    assert order["amount_cents"] == 2 * 1200
    assert order["status"] == "new"
    assert client.get("/admin/picking").json() == [
        {"order_id": order["id"], "product_id": product["id"], "qty": 2}
    ]
    wait_until(lambda: f"order_created:{order['id']}" in client.get("/admin/events").json())


def test_volume_discounts_apply(client, settings, user, wait_until):
    product = client.post(
        "/products", json={"name": "Cup", "price_cents": 1000, "stock": 50}
    ).json()
    body = {"user_id": user["id"], "product_id": product["id"], "qty": 10, "day": DAY}

    assert client.post("/orders", json=body).json()["amount_cents"] == 10 * 950
    wait_until(lambda: stock_of(settings, product) == 40, message="the stock decrement")


def test_an_order_beyond_the_stock_is_refused(client, user, product):
    body = {"user_id": user["id"], "product_id": product["id"], "qty": 11, "day": DAY}
    assert client.post("/orders", json=body).status_code == 409


def test_checkout_captures_with_a_key_mails_a_receipt_audits_and_runs_hooks(
    client, order, gateway, outbox, paid_hook_calls, wait_until
):
    response = client.post(f"/orders/{order['id']}/checkout")

    assert response.status_code == 200
    assert response.json() == {"order_id": order["id"], "status": "paid", "capture_id": "cap_1"}
    [capture] = gateway.calls_to("/v1/captures")
    assert capture.headers["Idempotency-Key"] == f"capture-{order['id']}"
    assert json.loads(capture.content) == {"order_id": order["id"], "amount": 2400}
    # The receipt is sent inline: it is in the outbox when the response arrives.
    assert outbox[-1]["Subject"] == f"Receipt for order {order['id']}"
    assert paid_hook_calls == [{"order_id": order["id"], "capture_id": "cap_1"}]
    wait_until(lambda: audit_events(order["id"]) == ["checkout"], message="the audit row")
    assert client.get(f"/orders/{order['id']}").json()["status"] == "paid"


def test_a_second_checkout_is_refused(client, order, gateway, wait_until):
    assert client.post(f"/orders/{order['id']}/checkout").status_code == 200
    wait_until(lambda: audit_events(order["id"]) == ["checkout"], message="the audit row")

    assert client.post(f"/orders/{order['id']}/checkout").status_code == 409
    assert len(gateway.calls_to("/v1/captures")) == 1


def test_checkout_of_an_unknown_order_is_404(client):
    assert client.post("/orders/999/checkout").status_code == 404


def test_refund_calls_the_gateway_without_a_key(client, order, gateway, wait_until):
    client.post(f"/orders/{order['id']}/checkout")
    wait_until(lambda: audit_events(order["id"]) == ["checkout"], message="the audit row")

    response = client.post(f"/orders/{order['id']}/refund", json={"amount_cents": 1000})

    assert response.status_code == 202
    [refund] = gateway.calls_to("/v1/refunds")
    assert "Idempotency-Key" not in refund.headers
    assert json.loads(refund.content) == {"order_id": order["id"], "amount": 1000}
    shown = client.get(f"/orders/{order['id']}").json()
    assert (shown["status"], shown["refunded_cents"]) == ("refunded", 1000)


def test_refunds_beyond_the_paid_amount_or_before_payment_are_refused(client, order, wait_until):
    assert (
        client.post(f"/orders/{order['id']}/refund", json={"amount_cents": 100}).status_code == 409
    )
    client.post(f"/orders/{order['id']}/checkout")
    wait_until(lambda: audit_events(order["id"]) == ["checkout"], message="the audit row")

    assert (
        client.post(f"/orders/{order['id']}/refund", json={"amount_cents": 2401}).status_code == 409
    )
