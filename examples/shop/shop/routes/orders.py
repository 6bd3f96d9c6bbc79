"""Orders: placing, paying, refunding."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import asdict
from functools import partial
from threading import Thread as Worker

from fastapi import APIRouter, BackgroundTasks, HTTPException

from shop.db import connect
from shop.deps import BoardDep, ServicesDep
from shop.fulfilment import CheckoutForm
from shop.jobs import decrement_stock, write_audit
from shop.mail import send_receipt
from shop.models import OrderIn, RefundIn
from shop.payments import capture_payment, refund_payment
from shop.plugins import run_hook
from shop.pricing import quote
from shop.repo import insert_order, load_order, load_product, load_user

router = APIRouter()


@router.post("/orders", status_code=201)
def create_order(body: OrderIn, services: ServicesDep, board: BoardDep) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        load_user(conn, body.user_id)
        form = CheckoutForm(body, load_product(conn, body.product_id))
        draft = form.submit()  # look-alike: validation, not Executor.submit
        [amount] = quote(draft.product.price_cents, [draft.qty])
        order = insert_order(conn, draft.user_id, draft.product, draft.qty, amount, draft.day)
    # Site: thread through an aliased import.
    Worker(target=decrement_stock, args=(order.product_id, order.qty)).start()
    board.add_job(order.id, order.product_id, order.qty)  # look-alike: a to-do card
    services.events.publish(f"order_created:{order.id}")
    return asdict(order)


@router.post("/orders/{order_id}/checkout")
async def checkout(
    order_id: int, background_tasks: BackgroundTasks, services: ServicesDep
) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        if load_order(conn, order_id).status != "new":
            raise HTTPException(409, f"order {order_id} is already checked out")
    # Site: asyncio.to_thread; the result is used in the response.
    capture_id = await asyncio.to_thread(capture_payment, order_id)
    # Site: slow work inline, the customer waits for the SMTP round trip.
    send_receipt(order_id)
    # Site: a plain thread.
    threading.Thread(target=write_audit, args=("checkout", order_id)).start()
    # Site: BackgroundTasks with functools.partial.
    background_tasks.add_task(
        partial(run_hook, "order_paid", {"order_id": order_id, "capture_id": capture_id})
    )
    return {"order_id": order_id, "status": "paid", "capture_id": capture_id}


@router.post("/orders/{order_id}/refund", status_code=202)
def refund(
    order_id: int, body: RefundIn, background_tasks: BackgroundTasks, services: ServicesDep
) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        order = load_order(conn, order_id)
    if order.status == "new" or body.amount_cents > order.amount_cents - order.refunded_cents:
        raise HTTPException(409, f"order {order_id} cannot be refunded {body.amount_cents} cents")
    # Site: BackgroundTasks with a plain function.
    background_tasks.add_task(refund_payment, order_id, body.amount_cents)
    return {"order_id": order_id, "refund_cents": body.amount_cents}


@router.get("/orders/{order_id}")
def show_order(order_id: int, services: ServicesDep) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        return asdict(load_order(conn, order_id))
