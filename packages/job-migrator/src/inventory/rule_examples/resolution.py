"""Resolution: effects found through calls, recursion, re-exports and bound methods."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example, starter

# A wrapper awaiting the coroutine it is handed (two examples below).
_LOGGED = """
                import logging

                logger = logging.getLogger(__name__)

                async def logged(coro):
                    try:
                        await coro
                    except Exception:
                        logger.exception("background work failed")
            """


# Two functions a name may hold: a POST (non_idempotent) and a GET (two examples below).
_EXPORTERS = """
        import requests

        def to_csv(rows):
            requests.post("https://exports.example.com/csv", json=rows)

        def to_tsv(rows):
            requests.get("https://exports.example.com/tsv", params={"n": len(rows)})

"""

EXAMPLES: list[RuleExample] = [
    example(
        "a callable chosen in the branches of an if",
        _EXPORTERS
        + """
        def export(fmt, rows):
            if fmt == "csv":
                writer = to_csv
            else:
                writer = to_tsv
            writer(rows)
        """,
        "export",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.HTTP_GET},
        "Each path binds `writer` to another function: the call runs whichever the request "
        "chose, so both are followed, as for `to_csv if c else to_tsv`, never only the last "
        "one written (that would read only the GET and call the job idempotent).",
    ),
    example(
        "a callable bound in a try and again in its except",
        _EXPORTERS
        + """
        def export(request, rows):
            try:
                writer = to_tsv
                request.validate()
            except ValueError:
                writer = to_csv
            writer(rows)
        """,
        "export",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.HTTP_GET},
        "`writer` is `to_tsv` when the body ran to its end and `to_csv` when `validate` "
        "raised: a handler starts from what the body may have bound before it raised, and "
        "where the paths meet the call follows both, never only the handler's binding (the "
        "last written, which would read only the POST here, or only the GET the other way).",
    ),
    example(
        "a callable chosen by the cases of a match",
        _EXPORTERS
        + """
        def export(fmt, rows):
            writer = to_tsv
            match fmt:
                case "csv":
                    writer = to_csv
                case "tsv":
                    pass
            writer(rows)
        """,
        "export",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.HTTP_GET},
        "Each `case` starts from the bindings before the `match`, and so does the path where "
        "no case matches (there is no `case _:`): `writer` is `to_csv` or `to_tsv` after it, "
        "and the call follows both.",
    ),
    example(
        "a module global a set-up function rebinds",
        _EXPORTERS
        + """
        writer = to_tsv

        def configure(fmt):
            global writer
            if fmt == "csv":
                writer = to_csv

        def export(rows):
            writer(rows)
        """,
        "export",
        V.UNKNOWN,
        {K.DYNAMIC_CALL},
        "`configure` may have swapped the module's `writer` for `to_csv` before the request "
        "runs: the call is a dispatch known only at run time, not the GET of the first value.",
        evidence_mentions="writer(rows)",
    ),
    example(
        "a callable bound to None, then to a function in an if",
        """
        import requests

        def to_csv(rows):
            requests.post("https://exports.example.com/csv", json=rows)

        def export(fmt, rows):
            writer = None
            if fmt == "csv":
                writer = to_csv
            writer(rows)
        """,
        "export",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "A call through `None` fails before it does anything, so what the call can do is "
        "what `to_csv` does.",
    ),
    example(
        "effects two calls deep, across modules",
        """
        from shop.helpers import notify

        def close_order(order_id):
            notify(order_id)
        """,
        "close_order",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "The POST is two calls below the job; its evidence carries the chain job -> notify -> post_webhook.",
        more_files={
            "shop/helpers.py": (
                "import requests\n\n"
                "def notify(order_id):\n    post_webhook(order_id)\n\n"
                "def post_webhook(order_id):\n    requests.post('https://hooks.example.com', json={'id': order_id})\n"
            )
        },
    ),
    example(
        "recursion terminates",
        """
        from shop.models import Node

        def copy_tree(node_id, depth=0):
            Node.objects.create(parent_id=node_id)
            if depth < 3:
                copy_tree(node_id, depth + 1)
        """,
        "copy_tree",
        V.NON_IDEMPOTENT,
        {K.DB_INSERT},
        "Recursive calls reach a fixpoint; the insert is found once.",
        more_files={
            "shop/models.py": "from django.db import models\n\nclass Node(models.Model):\n    pass\n"
        },
    ),
    RuleExample(
        title="re-exports: a job imported through the package __init__",
        files={
            "shop/__init__.py": "from .mail import send_receipt\n",
            "shop/mail.py": "import smtplib\n\ndef send_receipt(order_id):\n    smtplib.SMTP('localhost').sendmail('a@x', ['b@x'], 'paid')\n",
            "shop/views.py": starter("shop", "send_receipt"),
        },
        job="shop.mail.send_receipt",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.EMAIL_SEND},
        why="`from shop import send_receipt` resolves through `shop/__init__.py` to `shop.mail.send_receipt`.",
    ),
    RuleExample(
        title="bound methods: a thread running obj.method",
        files={
            "shop/__init__.py": "",
            "shop/mail.py": "import requests\n\nclass Mailer:\n    def send(self, user_id):\n        requests.post('https://mail.example.com', json={'to': user_id})\n",
            "shop/views.py": (
                "import threading\nfrom shop.mail import Mailer\n\n"
                "def view(request):\n    mailer = Mailer()\n    threading.Thread(target=mailer.send, args=(1,)).start()\n"
            ),
        },
        job="shop.mail.Mailer.send",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`mailer = Mailer()` types the receiver, so `mailer.send` is `shop.mail.Mailer.send`.",
    ),
    RuleExample(
        title="types: a receiver's instance through a ForeignKey, with a model loaded at run time",
        files={
            "shop/__init__.py": "",
            "shop/models.py": (
                "import requests\n"
                "from django.db import models\n\n"
                "class Account(models.Model):\n"
                "    def notify(self):\n"
                "        requests.post('https://hooks.example.com', json={'id': self.pk})\n\n"
                "class Invoice(models.Model):\n"
                "    account = models.ForeignKey(Account, on_delete=models.CASCADE)\n"
            ),
            "shop/receivers.py": (
                "from django.apps import apps\n"
                "from django.db.models.signals import post_save\n"
                "from django.dispatch import receiver\n\n"
                "Invoice = apps.get_model('shop', 'Invoice')\n\n"
                "@receiver(post_save, sender=Invoice)\n"
                "def on_invoice(sender, instance, **kwargs):\n"
                "    instance.account.notify()\n"
            ),
        },
        job="shop.receivers.on_invoice",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`sender=Invoice` names the one project model called `Invoice` (loaded through "
        "`get_model`, so only its name is known), `instance` is an Invoice, and "
        "`instance.account` follows the ForeignKey to `Account.notify`.",
    ),
    example(
        "work a job spawns or awaits inside itself is the job's work",
        """
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        import requests

        def thumbnail(photo_id):
            return f"thumbs/{photo_id}.png"

        async def caption(photo_id):
            return str(photo_id)

        def publish(photo_id):
            requests.post("https://feed.example.com", json={"photo": photo_id})

        async def process_photo(photo_id):
            loop = asyncio.get_running_loop()
            path = await loop.run_in_executor(None, thumbnail, photo_id)
            text, _ = await asyncio.gather(caption(photo_id), asyncio.to_thread(thumbnail, photo_id))
            await asyncio.Task(caption(photo_id))
            await loop.create_task(caption(photo_id))
            with ThreadPoolExecutor() as pool:
                pool.submit(publish, photo_id).result()
            return path, text
        """,
        "process_photo",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "`loop.run_in_executor(None, f, a)`, `asyncio.to_thread(f, a)`, "
        "`anyio.to_thread.run_sync`, Starlette's `run_in_threadpool`, `loop.call_soon(f, a)` "
        "and `executor.submit(f, a)` call `f(a)`; `asyncio.create_task(coro(a))`, "
        "`asyncio.Task`, `ensure_future`, `gather`, `wait_for` and `loop.create_task` run "
        "the coroutine `coro(a)` made where it is written. What that work does is what the "
        "job does, awaited or not: the callable is followed like a direct call (here the "
        "POST of `publish`, whose future the job waits for: no site, yet the job's effect), "
        "and the spawn API itself is no unresolved call (`thumbnail` and `caption` do "
        "nothing a retry repeats, and nothing else is left unknown).",
    ),
    example(
        "a future's own methods run nothing; its done-callback and asyncio.run's coroutine run the job's work",
        """
        import asyncio

        import requests

        async def caption(photo_id):
            return str(photo_id)

        def publish(photo_id):
            requests.post("https://feed.example.com", json={"photo": photo_id})

        RUNNING = set()

        def start_captions(photo_id):
            task = asyncio.get_event_loop().create_task(caption(photo_id))
            RUNNING.add(task)
            task.add_done_callback(RUNNING.discard)
            task.add_done_callback(lambda _: publish(photo_id))
            task.set_name(f"caption-{photo_id}")
            if task.done():
                task.cancel()
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            loop.run_until_complete(caption(photo_id))
            loop.close()
            return asyncio.run(caption(photo_id))
        """,
        "start_captions",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "As asyncio documents them: a task's or future's own methods (`cancel`, `done`, "
        "`set_name`, `result`...) run nothing, on a future the scan typed "
        "(`asyncio.create_task`, `loop.create_task`, `run_in_executor`, `executor.submit` "
        "return one) or one a spawn API made; `add_done_callback(fn)` calls `fn` once the "
        "future is done, so `fn` is followed like any handed callable (here `publish`'s "
        "POST is the job's, and `RUNNING.discard` is matched as if called here: a set "
        "forgetting the task); `asyncio.run(coro(a))` and `loop.run_until_complete` run "
        "the coroutine made where it is written; making, setting and closing a loop is "
        "bookkeeping. A `cancel` the scan cannot place on a future keeps its meaning: on a "
        "receiver of unknown type it may be a project method of that name.",
    ),
    example(
        "a local partial, or a choice of callables, calls what it holds",
        """
        from functools import partial

        import requests

        def head(url):
            return requests.head(url, timeout=5)

        def notify(url, message):
            requests.post(url, json={"m": message})

        def check(url, quick=False):
            read = head if quick else requests.get
            read(url)
            send = partial(notify, url)
            send("checked")
        """,
        "check",
        V.NON_IDEMPOTENT,
        {K.HTTP_GET, K.HTTP_POST},
        "`send = partial(notify, url)` then `send(...)` calls `notify(url, ...)` (functools: a "
        "partial called behaves like its function called with the stored arguments first); "
        "`read = head if quick else requests.get` then `read(url)` calls one of the two (a "
        "conditional expression is one of its operands), so both are read as if called by "
        "name. A branch that is a parameter, a lambda or a call's result, or a local the "
        "function binds more than once (a branch, a loop or a closure may rebind it), leaves "
        "the call a dynamic dispatch, a gap.",
    ),
    example(
        "a function handed to a helper: each caller runs the one it hands",
        """
        import requests

        def post_hook(order_id):
            requests.post("https://hooks.example.com", json={"id": order_id})

        def tidy(order_id):
            return str(order_id).strip()

        def run_with(callback, order_id):
            callback(order_id)

        def announce(order_id):
            run_with(post_hook, order_id)

        def clean(order_id):
            run_with(tidy, order_id)
        """,
        "clean",
        V.IDEMPOTENT,
        set(),
        "`callback(order_id)` in `run_with` is a call through a parameter; every project call "
        "of `run_with` hands it a named project function (here two different ones), so each "
        "caller runs the one it hands: `clean` runs `tidy` and is idempotent, `announce` runs "
        "`post_hook` and posts; neither borrows the other's. A caller handing a lambda, a "
        "parameter of unknown value or a library function, more than four different functions, "
        "or a call leaving the parameter to its default, leaves the call a gap; a helper that "
        "only keeps the function (a registry, a listener list) runs nothing, so its callers "
        "own nothing.",
    ),
    example(
        "a callable handed to a spawn API that the scan cannot name stays a gap",
        """
        from concurrent.futures import ThreadPoolExecutor

        def run_hook(photo_id, hook):
            with ThreadPoolExecutor() as pool:
                return pool.submit(hook, photo_id).result()
        """,
        "run_hook",
        V.UNKNOWN,
        set(),
        "`hook` is a parameter: what `submit` calls is only known at run time, so the job "
        "is `unknown` and its evidence names `hook`, never the spawn API.",
        evidence_mentions="hook",
    ),
    RuleExample(
        title="a coroutine awaited through a parameter: the caller's argument is the work",
        files={
            "shop/__init__.py": "",
            "shop/jobs.py": """
                import httpx
                """
            + _LOGGED
            + """
                async def notify_hook(url):
                    async with httpx.AsyncClient() as client:
                        await client.post(url, json={"event": "paid"})
            """,
            "shop/views.py": """
                import asyncio

                from shop.jobs import logged, notify_hook

                async def paid(request, url):
                    asyncio.create_task(logged(notify_hook(url)))
            """,
        },
        job="shop.jobs.logged",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`await coro` of a parameter runs the coroutine the caller made: "
        "`logged(notify_hook(url))` hands it `notify_hook`'s, an `async def`, whose body runs "
        "where it is awaited, so the job posts. A caller handing anything else (a coroutine "
        "of a library, a task made elsewhere) leaves the await a call known only at run time: "
        "a gap, `unknown`. Before, the job read `idempotent`, every call it made explained and "
        "none with an effect: the await was no call at all.",
    ),
    RuleExample(
        title="a coroutine awaited through a parameter, handed from outside the scan",
        files={
            "shop/__init__.py": "",
            "shop/jobs.py": _LOGGED,
            "shop/views.py": """
                import asyncio

                from shop.jobs import logged

                async def paid(request, client):
                    asyncio.create_task(logged(client.sync_ledger()))
            """,
        },
        job="shop.jobs.logged",
        expected_verdict=V.UNKNOWN,
        expected_effect_kinds={K.DYNAMIC_CALL},
        why="`client.sync_ledger()` is a method of an object of unknown type: what `await coro` "
        "runs is only known at run time, a gap naming the await.",
        evidence_mentions="await coro",
    ),
    RuleExample(
        title="a task awaited through a parameter is waited for, not run",
        files={
            "shop/__init__.py": "",
            "shop/jobs.py": """
                import asyncio

                async def stop_worker(task: asyncio.Task, stop: asyncio.Event):
                    stop.set()
                    task.cancel()
                    try:
                        await task
                    except BaseException:
                        pass
            """,
            "shop/views.py": """
                import asyncio

                from shop.jobs import stop_worker

                async def disconnect(request, task: asyncio.Task, stop: asyncio.Event):
                    asyncio.create_task(stop_worker(task, stop))
            """,
        },
        job="shop.jobs.stop_worker",
        expected_verdict=V.IDEMPOTENT,
        expected_effect_kinds=set(),
        why="A parameter annotated as a task or a future (`asyncio.Task`, `asyncio.Future`, "
        "`concurrent.futures.Future`) holds work already running on its own: awaiting it waits "
        "for that work to end and runs none of it here, so it is no call through the parameter.",
    ),
    example(
        "a getter of a module-level instance, and a lazy singleton",
        """
        from typing import Optional

        import requests

        class Mailer:
            def send(self, to):
                requests.post("https://mail.example.com/send", json={"to": to})

        class Audit:
            def record(self, user_id):
                requests.put(f"https://audit.example.com/users/{user_id}", json={"seen": True})

        _mailer = Mailer()

        def get_mailer():
            return _mailer

        _audit: Optional[Audit] = None

        def get_audit():
            global _audit
            if _audit is None:
                _audit = Audit()
            return _audit

        def welcome(user_id):
            get_audit().record(user_id)
            get_mailer().send(user_id)
        """,
        "welcome",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.HTTP_PUT},
        "`get_mailer()` returns the module's one `Mailer` (`_mailer = Mailer()`), and "
        "`get_audit()` the lazy singleton declared `Optional[Audit]` (the `global` it "
        "assigns is one of that class): each call runs that class's method, so the POST "
        "decides the verdict. Before, both were guesses by method name and the job was "
        "`unknown`. A parameter or local of the same name is the function's own, not the "
        "module's instance.",
    ),
]
