"""Calls the catalogue explains are leaves; task-framework calls; metrics and error reports."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

_TASKS = """
from django.tasks import task

from shop.models import Upload

@task()
def delete_upload(upload_id):
    Upload.objects.filter(id=upload_id).delete()
"""
_MODELS = "from django.db import models\n\nclass Upload(models.Model):\n    pass\n\nclass Search(models.Model):\n    pass\n"
_METRICS = """
from django.db import models


class DailyStatManager(models.Manager):
    def record(self, scope, day):
        self.bulk_create([DailyStat(scope=scope, day=day, hits=0)], ignore_conflicts=True)


class DailyStat(models.Model):
    scope = models.IntegerField()
    day = models.DateField()
    hits = models.IntegerField()
    objects = DailyStatManager()

    class Meta:
        unique_together = (("scope", "day"),)


class Visit(models.Model):
    path = models.CharField(max_length=200)
"""

EXAMPLES: list[RuleExample] = [
    example(
        "a Django @task's enqueue() runs the task: its effects are the job's",
        """
        from shop.tasks import delete_upload

        def forget_upload(upload_id):
            delete_upload.enqueue(upload_id)
        """,
        "forget_upload",
        V.IDEMPOTENT,
        {K.DB_DELETE, K.DB_READ},
        "`task.enqueue(...)` of a function decorated with `django.tasks.task` (or the "
        "`django_tasks` backport) runs it at once under the default `ImmediateBackend`, so the "
        "call is followed into the task. A broker's `.delay()` (Celery...) is an `enqueue` "
        "effect instead: a retry enqueues the work again.",
        more_files={"shop/tasks.py": _TASKS, "shop/models.py": _MODELS},
    ),
    example(
        "non_idempotent: a metrics counter counts a retry again",
        """
        from prometheus_client import Counter

        SEARCHES = Counter("searches_total", "searches", ["kind"])

        def record_search(kind):
            SEARCHES.labels(kind).inc()
        """,
        "record_search",
        V.NON_IDEMPOTENT,
        {K.METRIC_INCR},
        "A counter `+ 1` (or a histogram observation) repeats on a retry; a gauge `set` "
        "converges. `labels(...)` only picks the series.",
    ),
    example(
        "idempotent: metrics next to real work are instrumentation",
        """
        from django.core.cache import cache
        from prometheus_client import Histogram

        CACHE_WRITES = Histogram("cache_write_seconds", "cache writes")

        def store_totals(key, totals):
            cache.set(key, totals, timeout=60)
            CACHE_WRITES.observe(0.1)
        """,
        "store_totals",
        V.IDEMPOTENT,
        {K.CACHE_SET, K.METRIC_INCR},
        "Counting decides only when it is all the job does; next to a write or a send, a "
        "double-counted metric changes no outcome, so the overwrite decides.",
    ),
    example(
        "a definite insert decides, whatever else is unresolved",
        """
        import sentry_sdk
        from shop.models import Search

        def log_search(user, query):
            try:
                Search._default_manager.create(user=user, query=query)
            except Exception as error:
                sentry_sdk.capture_exception(error)
            user.profile.touch()
        """,
        "log_search",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "`_default_manager` is a manager like `objects`; a known repeat is the lower bound, so "
        "the unresolved `user.profile.touch()` lowers the confidence but does not make the "
        "verdict `unknown`. Error reporting (`sentry_sdk.capture_exception`) is no effect.",
        more_files={"shop/models.py": _MODELS},
    ),
    example(
        "needs_key: bulk_create(ignore_conflicts=True) on a unique key, in the model's manager",
        """
        from shop.models import DailyStat

        def open_stats(scope, day):
            DailyStat.objects.record(scope, day)
        """,
        "open_stats",
        V.NEEDS_KEY,
        {K.DB_INSERT},
        "`self.bulk_create(...)` inside a `models.Manager` subclass is Django's own method, "
        "named by the library base that defines it (`django.db.models.Manager.bulk_create`). "
        "With `ignore_conflicts=True` the database skips a row whose unique key is taken: "
        "every instance built gives all of `unique_together` (scope, day), so a repeat "
        "inserts nothing, like an insert refused by a unique constraint (a guard). Building "
        "`DailyStat(...)` itself has no effect (Django's `Model.__init__` is `[[pure]]`).",
        more_files={"shop/models.py": _METRICS},
    ),
    example(
        "non_idempotent: bulk_create(ignore_conflicts=True) with no unique key to conflict on",
        """
        from shop.models import Visit

        def log_visits(paths):
            Visit.objects.bulk_create([Visit(path=p) for p in paths], ignore_conflicts=True)
        """,
        "log_visits",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "Only the generated primary key is unique: nothing conflicts, so a repeat inserts "
        "every row again. `update_conflicts=True` (update the conflicting row) is an upsert.",
        more_files={"shop/models.py": _METRICS},
    ),
    example(
        "idempotent: bulk_update and refresh_from_db",
        """
        from shop.models import Visit

        def normalise_paths(visit_ids):
            visits = list(Visit.objects.filter(id__in=visit_ids))
            for visit in visits:
                visit.path = visit.path.lower()
            Visit.objects.bulk_update(visits, ["path"])
            visits[0].refresh_from_db()
        """,
        "normalise_paths",
        V.IDEMPOTENT,
        {K.DB_OVERWRITE, K.DB_READ},
        "`bulk_update(objs, fields)` writes the given values: a retry writes the same ones. "
        "`refresh_from_db()` reloads an instance from its row.",
        more_files={"shop/models.py": _METRICS},
    ),
    example(
        "non_idempotent: Celery's delay_on_commit enqueues another message",
        """
        from shop.tasks import rebuild_index

        def schedule_rebuild(shop_id):
            rebuild_index.delay_on_commit(shop_id)
        """,
        "schedule_rebuild",
        V.NON_IDEMPOTENT,
        {K.ENQUEUE},
        "Celery 5.4's `delay_on_commit` / `apply_async_on_commit` wait for the transaction to "
        "commit, then enqueue like `.delay`: a retry enqueues the work again, and this task "
        "mails (an enqueued task whose own work is idempotent repeats nothing: see "
        '"idempotent: enqueueing a task whose own work is idempotent").',
        more_files={
            "shop/tasks.py": (
                "from celery import shared_task\n"
                "from django.core.mail import send_mail\n\n"
                "@shared_task\n"
                "def rebuild_index(shop_id):\n"
                "    send_mail('Rebuilt', 'Done', 'shop@example.com', ['ops@example.com'])\n"
            )
        },
    ),
    example(
        "non_idempotent: a Prisma Client insert; its reads and upserts converge",
        """
        async def audit(prisma_client, actor, action):
            await prisma_client.db.audit_log.create(data={"actor": actor, "action": action})

        async def sync_profile(prisma_client, user_id, name):
            await prisma_client.db.profile.upsert(
                where={"user_id": user_id},
                data={"create": {"user_id": user_id, "name": name}, "update": {"name": name}},
            )
            await prisma_client.db.profile.find_unique(where={"user_id": user_id})
        """,
        "audit",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "Prisma Client Python's `client.db.<model>.create` / `create_many` insert, `upsert` "
        "upserts, `update(_many)` overwrite, `delete(_many)` delete and `find_*` / `count` "
        "read. The entries look for the model accessor in the receiver "
        "(`prisma_client.db.audit_log`), so `create` on any other receiver is not taken for one.",
    ),
    example(
        "idempotent: the standard library's file calls as its documentation describes them",
        """
        import os
        import pathlib

        def mark_done(folder, name):
            marker = pathlib.Path(folder) / name
            marker.touch()
            fd = os.open(marker, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
            os.chmod(marker, 0o644)
        """,
        "mark_done",
        V.IDEMPOTENT,
        {K.FILE_WRITE},
        "The catalogue covers a standard-library module as its documentation describes it, "
        "not one call at a time: `Path.touch` creates the file or sets its time, `os.chmod` "
        "sets a mode (a second run sets the same), `os.fsync` flushes what was written, and "
        "opening, reading and closing a descriptor are the process's own plumbing. `os.write` "
        "writes at the descriptor's offset and is judged a write; `os.urandom` makes a new "
        "value each run; `os.exec*` / `spawn*` / `popen` run a program, as `subprocess` does.",
    ),
    example(
        "non_idempotent: bytes sent on a socket are sent again by a retry",
        """
        import socket

        def ping_monitor(host, port):
            sock = socket.socket()
            sock.connect((host, port))
            sock.sendall(b"ping")
            sock.close()
        """,
        "ping_monitor",
        V.NON_IDEMPOTENT,
        {K.SOCKET_EMIT},
        "Making, connecting, reading from and closing a socket (or an asyncio transport) "
        "are the connection's plumbing; `send`, `sendall`, `sendto`, a transport's `write` "
        "send bytes to the peer, which a retry sends again. A `multiprocessing` queue's `put` "
        "hands an object to another process, as an enqueue does.",
    ),
    example(
        "non_idempotent: Context.run(fn, ...) runs fn: its effects are the job's",
        """
        import contextvars

        import requests

        def notify(url):
            requests.post(url, json={"event": "done"})

        def notify_in_context(url):
            ctx = contextvars.copy_context()
            ctx.run(notify, url)
        """,
        "notify_in_context",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "`contextvars.Context.run(callable, *args)` executes `callable(*args)` in that context, "
        "in the calling thread (the docs' words), and `copy_context()` returns a `Context`: "
        "the callable is followed as if it were called there, as `asyncio.to_thread`'s is. "
        "Catalogued as pure it would have hidden the POST.",
    ),
    example(
        "unknown: asyncio's create_subprocess_exec starts a program; its Process is that run",
        """
        import asyncio
        import os
        import signal

        async def convert(src, dst):
            done = asyncio.Event()
            proc = await asyncio.create_subprocess_exec("ffmpeg", "-i", src, dst)
            code = await proc.wait()
            done.set()
            if code and os.environ.get("STRICT"):
                proc.send_signal(signal.SIGTERM)
            return code
        """,
        "convert",
        V.UNKNOWN,
        {K.SUBPROCESS},
        "`asyncio.create_subprocess_exec` and `_shell` start a program, as `subprocess.Popen` "
        "does: what the program does is invisible here, so the verdict is `unknown` (a "
        "reviewer pins it); the `Process` they return is that one run: `wait()`, "
        "`communicate()` and its pipes repeat nothing of their own, as `Popen`'s methods do "
        "not (signalling it included). An `asyncio.Event`, named by the module that defines it (`asyncio.locks`) "
        "when the standard library's source is read, wakes waiters in this process only; "
        "reading `os.environ` reads this process's environment.",
    ),
    example(
        "idempotent: numpy, psutil, PyJWT and click as their references describe them",
        """
        import click
        import jwt
        import numpy
        import psutil

        def snapshot(token, key, path):
            claims = jwt.decode(token, key, algorithms=["HS256"])
            load = psutil.Process().cpu_percent()
            samples = numpy.array([load, psutil.virtual_memory().percent])
            click.echo(f"{claims['sub']}: {samples.mean()}")
            numpy.save(path, samples)
            return samples.tolist()
        """,
        "snapshot",
        V.IDEMPOTENT,
        {K.FILE_WRITE},
        "Libraries the census found blocking verdicts in several packages, each entry read "
        "off its reference: numpy computes on arrays in memory, and `numpy.save`, `savez`, "
        "`savetxt` (an array's `tofile`) write a file (`file_write`: a retry writes the same "
        "bytes), `numpy.random` draws random values; psutil's system and process "
        "information are reads (a `Process`'s `kill` or `send_signal` is left a gap, as "
        "`os.kill` is: a signal is no slow work, what it does is the other program's); PyJWT's `encode` / `decode` compute on their arguments, its "
        "`PyJWKClient` fetches keys over HTTP; click's `echo` prints as `print` does, "
        "`launch` and `edit` start a program; `tolist()` converts an array or a Series to a "
        "list whatever the receiver is.",
    ),
    example(
        "idempotent: a pydantic model's own API through cls, as through self",
        """
        from pydantic import BaseModel

        class Draft(BaseModel):
            title: str

            @classmethod
            def blank(cls, title):
                return cls.model_construct(title=title)

            def schema_size(self):
                return len(self.model_json_schema())

        def prepare(title):
            draft = Draft.blank(title)
            return draft.schema_size()
        """,
        "prepare",
        V.IDEMPOTENT,
        set(),
        "pydantic v2 reserves the `model_` namespace for `BaseModel`'s own API (a field of "
        "that name is refused), and `model_construct`, `model_json_schema`, `model_rebuild`, "
        "`model_validate`, `model_dump` build, inspect or serialise values. Called on `cls` "
        "in a classmethod the method is the class's, inherited from `pydantic.BaseModel` "
        "(named as the project's bases write it, its source not read): no I/O of its own. "
        "A method of that name the project's model defines is its code, and is followed. "
        "`return cls.model_construct(...)` (or `model_validate`, v1's `parse_obj`) returns "
        "an instance of the class, as `return cls(...)` does: `Draft.blank(title)` is a "
        "`Draft`, whose methods are followed.",
    ),
    example(
        "idempotent: a template loaded and rendered (Django, Jinja2) is text",
        """
        from django.template import loader
        from jinja2 import Environment, FileSystemLoader

        env = Environment(loader=FileSystemLoader("templates"))

        def preview(context):
            template = loader.select_template(["mail/custom.txt", "mail/default.txt"])
            page = env.get_template("page.html")
            return template.render(context=context) + page.render(**context)
        """,
        "preview",
        V.IDEMPOTENT,
        set(),
        "Django's `get_template` and `select_template` return a backend's `Template`, whose "
        "`render(context, request)` returns a string (the template API reference); a "
        "Jinja2 `Environment`'s `get_template`, `select_template` and `from_string` return "
        "a `jinja2.Template`, whose `render`, `generate` and `stream` produce text. Neither "
        "sends or stores anything of its own; the template's tags are not read, as "
        "`render_to_string`'s are not.",
    ),
]
