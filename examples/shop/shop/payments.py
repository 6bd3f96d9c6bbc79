"""A Stripe-like payment gateway client and the two payment jobs."""

from __future__ import annotations

from typing import Any

import httpx

from shop.db import connect
from shop.repo import load_order
from shop.services import current


class GatewayError(RuntimeError):
    """The payment gateway refused the request."""


class GatewayClient:
    def __init__(self, base_url: str, api_key: str, transport: httpx.BaseTransport | None = None):
        headers = {"Authorization": f"Bearer {api_key}"}
        self._http = httpx.Client(
            base_url=base_url, headers=headers, transport=transport, timeout=10
        )

    def close(self) -> None:
        self._http.close()

    def capture(self, order_id: int, amount_cents: int, idempotency_key: str) -> str:
        """The gateway answers a repeated key with the first capture: safe to retry."""
        body = {"order_id": order_id, "amount": amount_cents}
        response = self._http.post(
            "/v1/captures", json=body, headers={"Idempotency-Key": idempotency_key}
        )
        return str(_checked(response)["id"])

    def refund(self, order_id: int, amount_cents: int) -> str:
        """No idempotency key: every call refunds again."""
        response = self._http.post(
            "/v1/refunds", json={"order_id": order_id, "amount": amount_cents}
        )
        return str(_checked(response)["id"])


def _checked(response: httpx.Response) -> dict[str, Any]:
    if response.is_error:
        raise GatewayError(f"{response.request.url.path}: {response.status_code} {response.text}")
    return dict(response.json())


def capture_payment(order_id: int) -> str:
    """Job (needs_key: it moves money, made safe by a key derived from the order id)."""
    services = current()
    with connect(services.settings.database) as conn:
        order = load_order(conn, order_id)
    settings = services.settings
    gateway = GatewayClient(settings.gateway_url, settings.gateway_key, services.gateway_transport)
    try:
        capture_id = gateway.capture(
            order_id, order.amount_cents, idempotency_key=f"capture-{order_id}"
        )
    finally:
        gateway.close()
    with connect(settings.database) as conn:
        conn.execute(
            "UPDATE orders SET status = 'paid', capture_id = ? WHERE id = ?", (capture_id, order_id)
        )
    return capture_id


def refund_payment(order_id: int, amount_cents: int) -> None:
    """Job (unsafe: moves money without a key; a retry refunds twice)."""
    services = current()
    settings = services.settings
    gateway = GatewayClient(settings.gateway_url, settings.gateway_key, services.gateway_transport)
    try:
        gateway.refund(order_id, amount_cents)
    finally:
        gateway.close()
    with connect(settings.database) as conn:
        conn.execute(
            "UPDATE orders SET refunded_cents = refunded_cents + ?, status = 'refunded' WHERE id = ?",
            (amount_cents, order_id),
        )
