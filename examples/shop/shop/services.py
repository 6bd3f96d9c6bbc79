"""What the running app shares with its jobs.

Jobs take only JSON-able arguments (ids, names, days) so that they can later
run in a worker process; whatever else they need (paths, the mail backend,
the payment transport) they look up here, the way Flask's ``current_app`` or
Django's ``settings`` work. The app's lifespan installs it and removes it.
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass, field
from email.message import EmailMessage

import httpx

from shop.events import EventLog
from shop.fulfilment import PickingBoard
from shop.settings import Settings


class ShopNotRunning(RuntimeError):
    """The shop's services are not installed: the app is not started."""


@dataclass
class Services:
    settings: Settings
    # When set, mail is kept in this list instead of going to SMTP (like Django's locmem backend).
    outbox: list[EmailMessage] | None = None
    # None in production: httpx then talks to the real gateway URL.
    gateway_transport: httpx.BaseTransport | None = None
    board: PickingBoard = field(default_factory=PickingBoard)
    events: EventLog = field(default_factory=EventLog)
    processes: list[multiprocessing.Process] = field(default_factory=list)


_installed: list[Services] = []


def install(services: Services) -> None:
    _installed.append(services)


def uninstall(services: Services) -> None:
    _installed.remove(services)


def current() -> Services:
    if not _installed:
        raise ShopNotRunning(ShopNotRunning.__doc__)
    return _installed[-1]
