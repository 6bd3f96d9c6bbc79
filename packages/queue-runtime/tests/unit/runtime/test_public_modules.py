"""The public modules of queue_runtime are exactly these (httpx's habit).

Public: no part of the dotted path starts with an underscore. What is listed
is what docs/ and README.md tell an app or an operator to import, what the
tools (``migrator``, ``codemods``) import, and the implementations' modules
the runtime's own tests reach into. Everything else is an implementation
module and private: a new module is private unless it joins this list.
"""

from __future__ import annotations

import pkgutil

import queue_runtime

PUBLIC = {
    # what an app imports (docs/runtime.md, docs/django.md, docs/dashboard.md, README.md)
    "queue_runtime.codecs",
    "queue_runtime.config",
    "queue_runtime.django",
    "queue_runtime.django_mail",
    "queue_runtime.errors",
    "queue_runtime.fallbacks",
    "queue_runtime.jobs",
    "queue_runtime.keys",
    "queue_runtime.local_keys",
    "queue_runtime.periodic",
    "queue_runtime.retry",
    "queue_runtime.web",
    "queue_runtime.web.command",
    # the composition root, the seams and their records, the gate
    "queue_runtime.bootstrap",
    "queue_runtime.runtime",
    "queue_runtime.registry",
    "queue_runtime.definition",
    "queue_runtime.handle",
    "queue_runtime.store",
    "queue_runtime.gate",
    "queue_runtime.gate.api",
    "queue_runtime.gate.fingerprint",
    "queue_runtime.shadow",
    "queue_runtime.shadow_model",
    "queue_runtime.metrics",
    "queue_runtime.payload",
    "queue_runtime.schema",
    # the faces an operator runs
    "queue_runtime.cli",
    "queue_runtime.worker",
    # the tools' door
    "queue_runtime.tools",
    # test helpers (docs/runtime.md, "Testing an app that uses queue_runtime"; the pytest11 plugin)
    "queue_runtime.testing",
    "queue_runtime.testing.pytest_plugin",
    "queue_runtime.testing.server_fixtures",
    "queue_runtime.testing.services",
    "queue_runtime.testing.spawner",
    # schema migrations (alembic reads env.py by its name)
    "queue_runtime.migrations",
    "queue_runtime.migrations.env",
    "queue_runtime.migrations.naming",
    # the implementations: Redis, and PostgreSQL's stores and connections
    "queue_runtime.redis",
    "queue_runtime.pg",
    "queue_runtime.pg.admin",
    "queue_runtime.pg.bulk",
    "queue_runtime.pg.catalog",
    "queue_runtime.pg.connect",
    "queue_runtime.pg.dashboard",
    "queue_runtime.pg.gate",
    "queue_runtime.pg.inspect",
    "queue_runtime.pg.loop_pools",
    "queue_runtime.pg.retry",
    "queue_runtime.pg.store",
}


def _public_modules() -> set[str]:
    found = pkgutil.walk_packages(queue_runtime.__path__, "queue_runtime.")
    return {m.name for m in found if not any(p.startswith("_") for p in m.name.split(".")[1:])}


def test_the_public_modules_are_exactly_the_listed_ones() -> None:
    assert sorted(_public_modules()) == sorted(PUBLIC)
