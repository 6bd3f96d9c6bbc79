"""What migrated ihatemoney's start-up adds: the session the runtime's model codec reads with.

``send_creation_email(project)`` crosses with the ``Project`` by reference (model and
primary key); reading it again, in a worker or in the inline round trip, needs the app's
session, registered once per process (docs/runtime.md, "SQLAlchemy needs the app's
session"). Imported by the suite (``-p ihatemoney_startup``), the workers' app module and
the load test's sandbox.
"""

from __future__ import annotations

from ihatemoney.models import db

from queue_runtime.codecs import sqlalchemy_session

sqlalchemy_session(lambda: db.session)
