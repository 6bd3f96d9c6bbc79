"""Mail: composed here, delivered over SMTP (or kept in the outbox in dev and tests).

Both jobs reach ``smtplib`` two calls deep (job -> ``deliver`` -> SMTP), which
is what the scanner has to follow to see that they send mail.
"""

from __future__ import annotations

import smtplib
from email.message import EmailMessage

from shop.db import connect
from shop.repo import load_order, load_product, load_user
from shop.services import current


def compose(sender: str, to: str, subject: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg.set_content(body)
    return msg


def deliver(msg: EmailMessage) -> None:
    services = current()
    if services.outbox is not None:
        services.outbox.append(msg)
        return
    settings = services.settings
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=10) as smtp:
        smtp.send_message(msg)


def send_welcome(user_id: int) -> None:
    """Job (non-idempotent: a second run sends a second mail), submitted to the thread pool.

    A module-level function taking an id (not a method of a mailer object), so
    a worker can import it and its argument is plain JSON: it can be moved.
    """
    services = current()
    with connect(services.settings.database) as conn:
        user = load_user(conn, user_id)
    body = f"Hello {user.name}, welcome to the shop!"
    deliver(compose(services.settings.mail_from, user.email, "Welcome to the shop", body))


def send_receipt(order_id: int) -> None:
    """Job (non-idempotent), called inline by the checkout endpoint."""
    services = current()
    with connect(services.settings.database) as conn:
        order = load_order(conn, order_id)
        user = load_user(conn, order.user_id)
        product = load_product(conn, order.product_id)
    body = f"{order.qty} x {product.name}: {order.amount_cents / 100:.2f} EUR, paid."
    deliver(compose(services.settings.mail_from, user.email, f"Receipt for order {order.id}", body))
