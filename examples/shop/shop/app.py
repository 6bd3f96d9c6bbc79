"""The FastAPI app: ``uvicorn shop.app:app``; tests call :func:`create_app`."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from email.message import EmailMessage

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from shop import workers
from shop.db import init_db
from shop.fulfilment import OutOfStock
from shop.models import NotFound
from shop.payments import GatewayError
from shop.routes import ROUTERS
from shop.services import Services, install, uninstall
from shop.settings import Settings

ERROR_STATUS: dict[type[Exception], int] = {
    NotFound: 404,
    OutOfStock: 409,
    sqlite3.IntegrityError: 409,
    GatewayError: 502,
}


@dataclass(frozen=True, slots=True)
class _Setup:
    """What create_app was given; the lifespan turns it into Services at startup."""

    settings: Settings | None
    outbox: list[EmailMessage] | None
    gateway_transport: httpx.BaseTransport | None


def create_app(
    settings: Settings | None = None,
    *,
    outbox: list[EmailMessage] | None = None,
    gateway_transport: httpx.BaseTransport | None = None,
) -> FastAPI:
    """Settings default to the environment (``SHOP_HOME``, ``SHOP_SMTP_HOST``...), read at startup."""
    app = FastAPI(title="shop", lifespan=_lifespan)
    app.state.setup = _Setup(settings, outbox, gateway_transport)
    for router in ROUTERS:
        app.include_router(router)
    for exc_type, status in ERROR_STATUS.items():
        app.add_exception_handler(exc_type, _respond_with(status))
    return app


def _respond_with(status: int) -> Callable[[Request, Exception], JSONResponse]:
    def handler(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status)

    return handler


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    setup: _Setup = app.state.setup
    settings = setup.settings or Settings.from_env(os.environ)
    init_db(settings.database)
    services = Services(settings, setup.outbox, setup.gateway_transport)
    services.events.start()
    install(services)
    app.state.services = services
    try:
        yield
    finally:
        _shutdown(services)


def _shutdown(services: Services) -> None:
    workers.drain()
    for proc in services.processes:
        proc.join(timeout=30)
    services.events.stop()
    uninstall(services)


app = create_app()
