"""A worker app module for ihatemoney's own code: a mail job that needs the Flask app.

``queue-runtime worker ihatemoney_jobs --flask-app ihatemoney.run:create_app
--server-name ... --url-scheme https`` runs it: ``send_email`` reads
``current_app.mail`` and the body links back with ``url_for(_external=True)``,
so it works only inside the app context the worker's bootstrap pushes.
"""

from __future__ import annotations

import ihatemoney_outbox  # noqa: F401  (counts the mails this worker sends)
from flask import url_for
from flask_mail import Message
from ihatemoney.utils import send_email

from queue_runtime import configure, job
from queue_runtime.testing import settings_from_env

_settings = settings_from_env()
if _settings is not None:
    configure(_settings)


@job(name="realapps.ihatemoney.welcome_mail")
def welcome_mail(address: str) -> bool:
    link = url_for("main.home", _external=True)
    return bool(send_email(Message("Welcome", recipients=[address], body=f"Start at {link}")))
