"""Sign-up."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from shop import workers
from shop.db import connect
from shop.deps import ServicesDep
from shop.mail import send_welcome
from shop.models import SignupIn
from shop.repo import insert_user

router = APIRouter()


@router.post("/users", status_code=201)
def signup(body: SignupIn, services: ServicesDep) -> dict[str, object]:
    with connect(services.settings.database) as conn:
        user = insert_user(conn, body.email, body.name)
    # Site: executor submit on the module-level pool.
    workers.EXECUTOR.submit(send_welcome, user.id)
    services.events.publish(f"user_signed_up:{user.id}")
    return asdict(user)
