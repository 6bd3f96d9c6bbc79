"""Load-test sandbox for migrated ihatemoney: its own queue schema, its own app database.

``migrator loadtest JOB --sandbox ihatemoney_sandbox --args ihatemoney_sandbox:projects``:
the queue comes from ``$REALAPP_SANDBOX_SETTINGS`` (a Settings JSON naming the Flask app,
so the load test's workers run each job in the app's context), the app's database from
``IHATEMONEY_SETTINGS_FILE_PATH`` (a sandbox SQLite file, mail suppressed). Each job of
the load test gets a project of its own, committed before its enqueue, as the API's
``POST /api/projects`` does before it enqueues the creation mail. The job,
``send_creation_email(project)``, gets the ``Project`` itself: the runtime's model codec
stores it by reference (model and primary key) and the worker reads the row again.
"""

from __future__ import annotations

import os
import secrets

import ihatemoney_outbox  # noqa: F401  (the load test's mails are counted too)
import ihatemoney_startup  # noqa: F401  (the session the model codec reads references with)

from queue_runtime import Settings, configure
from queue_runtime.bootstrap import bootstrap

SETTINGS = Settings.model_validate_json(os.environ["REALAPP_SANDBOX_SETTINGS"])
configure(SETTINGS)
_RUN = secrets.token_hex(3)
_made: list[str] = []


def projects(i: int) -> dict[str, object]:
    from ihatemoney.models import Project, db

    with bootstrap(SETTINGS).job_scope():
        if not _made:
            db.create_all()
        project_id = f"lt-{_RUN}-{i}"
        db.session.add(
            Project(
                id=project_id,
                name=project_id,
                password="x",
                contact_email=f"{project_id}@loadtest.example",
                default_currency="XXX",
            )
        )
        db.session.commit()
        project = db.session.get(Project, project_id)  # loaded: its key is readable outside
        db.session.expunge(project)
    _made.append(project_id)
    return {"project": project}


__all__ = ["SETTINGS", "projects"]
