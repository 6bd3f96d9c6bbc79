"""Dispatch through objects: extensions behind proxies, pluggable classes, singletons."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V

_VIEW = """
    from flask import Blueprint, request

    from {module} import {name}

    bp = Blueprint("accounts", __name__)

    @bp.route("/forgot", methods=["POST"])
    def forgot_password():
        {call}
        return "sent"
"""


def _view(module: str, name: str, call: str, threaded: bool = False) -> str:
    view = _VIEW.format(module=module, name=name, call=call)
    return "\n    import threading\n" + view if threaded else view


EXAMPLES: list[RuleExample] = [
    RuleExample(
        title="an extension behind a LocalProxy, with a mail class chosen in its set-up",
        files={
            "accounts/__init__.py": "",
            "accounts/mail.py": """
                import smtplib

                class MailUtil:
                    def __init__(self, app):
                        self.sender = app.config["MAIL_SENDER"]

                    def send_mail(self, recipient, subject):
                        with smtplib.SMTP("localhost") as smtp:
                            smtp.sendmail(self.sender, [recipient], subject)
            """,
            "accounts/core.py": """
                from flask import current_app
                from werkzeug.local import LocalProxy

                from accounts.mail import MailUtil

                class Accounts:
                    def __init__(self, app=None, mail_util_cls=None):
                        self.mail_util_cls = mail_util_cls
                        if app is not None:
                            self.init_app(app)

                    def init_app(self, app):
                        self.mail_util = (self.mail_util_cls or MailUtil)(app)
                        app.extensions["accounts"] = self

                _accounts = LocalProxy(lambda: current_app.extensions["accounts"])
            """,
            "accounts/views.py": _view(
                "accounts.core",
                "_accounts",
                '_accounts.mail_util.send_mail(request.form["email"], "Reset")',
            ),
        },
        job="accounts.mail.MailUtil.send_mail",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.EMAIL_SEND},
        why="Flask extensions register themselves with `app.extensions[name] = self` in "
        "`init_app`; the scan joins that store with `current_app.extensions[name]` read "
        "anywhere, here behind a werkzeug `LocalProxy` (which stands for what its getter "
        "returns). `(mail_util_cls or MailUtil)(app)` is an instance of one of the classes "
        "written there (the parameter's value is unknown, so the default names the class). "
        "An `extensions[name]` that nothing in the scan registers is a gap: the handler's "
        "call is reported as an `unknown` site that names it.",
    ),
    RuleExample(
        title="current_app.<name>: an object the app factory stored on the app",
        files={
            "portal/__init__.py": "",
            "portal/notify.py": """
                import requests

                class Notifier:
                    def __init__(self, app):
                        self.url = app.config["HOOK_URL"]

                    def post_event(self, event):
                        requests.post(self.url, json={"event": event})
            """,
            "portal/app.py": """
                from flask import Flask

                from portal.notify import Notifier

                def create_app():
                    app = Flask(__name__)
                    app.notifier = Notifier(app)
                    return app
            """,
            "portal/views.py": _view(
                "flask", "current_app", 'current_app.notifier.post_event("password_reset")'
            ),
        },
        job="portal.notify.Notifier.post_event",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`app.notifier = Notifier(app)` in the factory stores a Notifier on the app, so "
        "`current_app.notifier.post_event` in a view is `Notifier.post_event` (the same for "
        "`g.name = ...` read back as `g.name`).",
    ),
    RuleExample(
        title="a module-level singleton whose client class comes from configuration",
        files={
            "portal/__init__.py": "",
            "portal/clients.py": """
                import requests

                class HttpClient:
                    def deliver(self, event):
                        requests.post("https://hooks.example.com", json={"event": event})
            """,
            "portal/hooks.py": """
                from werkzeug.utils import import_string

                from portal.settings import CONFIG

                class Hooks:
                    def __init__(self, config):
                        self.client = import_string(config.get("HOOKS_CLIENT", "portal.clients.HttpClient"))()

                    def fire(self, event):
                        self.client.deliver(event)

                hooks = Hooks(CONFIG)
            """,
            "portal/settings.py": "CONFIG = {}\n",
            "portal/views.py": _view("portal.hooks", "hooks", 'hooks.fire("password_reset")'),
        },
        job="portal.hooks.Hooks.fire",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`hooks = Hooks(CONFIG)` at module level makes `hooks.fire` in another module "
        "`Hooks.fire`; `self.client`, assigned in `__init__` from `import_string` with a "
        "literal default, is an instance of that default class.",
    ),
    RuleExample(
        title="a service object a factory function builds at import, its method in a thread",
        files={
            "portal/__init__.py": "",
            "portal/notify.py": """
                import requests

                class Notifier:
                    def post_event(self, event):
                        requests.post("https://hooks.example.com", json={"event": event})

                def make_notifier() -> Notifier:
                    return Notifier()

                notifier = make_notifier()
            """,
            "portal/views.py": _view(
                "portal.notify",
                "notifier",
                'threading.Thread(target=notifier.post_event, args=("reset",)).start()',
                threaded=True,
            ),
        },
        job="portal.notify.Notifier.post_event",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`notifier = make_notifier()` holds what `make_notifier` returns (its annotation, "
        "or the class every return builds), so `notifier.post_event` handed to a thread, "
        "here or in a function's local `n = make_notifier()`, is `Notifier.post_event`; a "
        "factory whose returns differ leaves the site `unknown`.",
    ),
    RuleExample(
        title="a function handed to a helper that calls it, or kept by a constructor",
        files={
            "portal/__init__.py": "",
            "portal/hooks.py": """
                import requests

                def post_event(event):
                    requests.post("https://hooks.example.com", json={"event": event})

                class Retrying:
                    def __init__(self, send):
                        self._send = send

                    def deliver(self, event):
                        self._send(event)
            """,
            "portal/views.py": """
                import threading

                from flask import Blueprint

                from portal.hooks import Retrying, post_event

                bp = Blueprint("accounts", __name__)

                def announce(event):
                    Retrying(send=post_event).deliver(event)

                @bp.route("/forgot", methods=["POST"])
                def forgot_password():
                    threading.Thread(target=announce, args=("reset",)).start()
                    return "sent"
            """,
        },
        job="portal.views.announce",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="Every project call of `Retrying` hands `send` the function `post_event`, so "
        "`self._send(event)` (kept by `__init__`) is `post_event(event)`; the same for "
        "`fn(x)` on a parameter. Callers handing different functions leave the call known "
        "only at run time (`unknown`).",
    ),
    RuleExample(
        title="a signal's send() runs the project's receivers of that signal",
        files={
            "shop/__init__.py": "",
            "shop/signals.py": """
                from django.dispatch import Signal

                order_paid = Signal()
            """,
            "shop/receivers.py": """
                import requests
                from django.dispatch import receiver

                from shop.signals import order_paid

                @receiver(order_paid)
                def notify_warehouse(sender, order_id, **kwargs):
                    requests.post("https://warehouse.example.com/ship", json={"order": order_id})
            """,
            "shop/jobs.py": """
                import threading

                from shop.signals import order_paid

                def settle(order_id):
                    order_paid.send(sender=None, order_id=order_id)

                def view(request):
                    threading.Thread(target=settle, args=(request.POST["order"],)).start()
            """,
        },
        job="shop.jobs.settle",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="Django's `Signal.send` (and `send_robust`, `asend`) calls every receiver "
        "connected to the signal, in the caller, before it returns; blinker's `send` does the "
        "same. So `order_paid.send(...)` runs the project's receivers of `order_paid`: "
        "`@receiver(order_paid)`, `order_paid.connect(fn)`, blinker's `@sig.connect` and "
        "`connect_via`, however the signal is imported (re-exports followed), a blinker "
        "`ns.signal(...)` by its module name. Each receiver is a callee: here the POST makes "
        "`settle` non-idempotent. A send that names its sender (`sender=Note`, a project "
        "class) runs the receivers connected for that sender or for every sender. A signal "
        "with no receiver in the scan (a built-in one such as `post_save` sent by hand, or "
        "one only other packages connect to) stays what it was: a gap naming the send.",
    ),
    RuleExample(
        title="unknown: a signal no receiver of the project listens to is a gap naming the send",
        files={
            "shop/__init__.py": "",
            "shop/signals.py": """
                from django.dispatch import Signal

                order_refunded = Signal()
            """,
            "shop/jobs.py": """
                import threading

                from shop.signals import order_refunded

                def announce(order_id):
                    order_refunded.send(sender=None, order_id=order_id)

                def view(request):
                    threading.Thread(target=announce, args=(request.POST["order"],)).start()
            """,
        },
        job="shop.jobs.announce",
        expected_verdict=V.UNKNOWN,
        expected_effect_kinds=set(),
        why="With no receiver of `order_refunded` in the project, what the send runs is what "
        "other packages connect to it, only known at run time: one gap naming Django's "
        "`Signal.send` (or blinker's), whose body is not followed (it loops over the receivers "
        "connected at run time, and would only report that loop's calls). Only a reviewer can "
        "settle it: the reason offers the pinned verdict.",
    ),
    RuleExample(
        title="a model's save() runs the project's post_save receivers of that model",
        files={
            "shop/__init__.py": "",
            "shop/models.py": """
                import requests
                from django.db import models
                from django.db.models.signals import post_save
                from django.dispatch import receiver

                class Order(models.Model):
                    state = models.CharField(max_length=20)

                @receiver(post_save, sender=Order)
                def ship(sender, instance, created, **kwargs):
                    if instance.state == "paid":
                        requests.post("https://warehouse.example.com/ship", json={"order": instance.pk})
            """,
            "shop/jobs.py": """
                import threading

                from shop.models import Order

                def mark_paid(order_id):
                    order = Order.objects.get(pk=order_id)
                    order.state = "paid"
                    order.save()

                def view(request):
                    threading.Thread(target=mark_paid, args=(request.POST["order"],)).start()
            """,
        },
        job="shop.jobs.mark_paid",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.DB_READ, K.DB_OVERWRITE, K.HTTP_POST},
        why="Overwriting a row converges, but Django's `Model.save()` sends `pre_save` and "
        "`post_save` with the model's class as sender, and every receiver connected for that "
        'model (`sender=Order`, `sender="shop.Order"`) or for every sender runs before '
        "`save()` returns: here a POST to the warehouse, which a retry of `mark_paid` would "
        "send again. So do `delete()` (`pre_delete`, `post_delete`) and a manager's `create()`, "
        "`get_or_create()` and `update_or_create()` (a save of the new row). A queryset's "
        "`update()` and `bulk_create()` send no signal, and a receiver of another model is not "
        "run.",
    ),
    RuleExample(
        title="attributes of attributes: each through the class it holds, to any depth",
        files={
            "home/__init__.py": "",
            "home/flows.py": """
                from typing import Generic, TypeVar

                import requests

                R = TypeVar("R")

                class FlowManager(Generic[R]):
                    def start(self, handler, data):
                        requests.post("https://flows.example/start", json={"h": handler})

                class EntryFlowManager(FlowManager[dict]):
                    pass

                class Entries:
                    def __init__(self, hub):
                        self.flow = EntryFlowManager()

                class Hub:
                    def __init__(self):
                        self.entries: Entries = Entries(self)

                hub = Hub()
            """,
            "home/views.py": _view(
                "home.flows", "hub", 'hub.entries.flow.start("zeroconf", request.form)'
            ),
        },
        job="home.flows.FlowManager.start",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`hub.entries.flow.start(...)`: `hub` is a `Hub`, whose `entries` is declared an "
        "`Entries` (or assigned one in `__init__`), whose `flow` is assigned an "
        "`EntryFlowManager` in its `__init__`; the method comes from a generic base "
        "(`FlowManager[dict]`). Each attribute is followed through the class it holds, at any "
        "depth, as one attribute is; where one along the chain holds nothing the scan can "
        "type, the call stays a gap that names it.",
    ),
    RuleExample(
        title="a generic class instantiated through its alias: Debouncer[None](...)",
        files={
            "home/__init__.py": "",
            "home/debounce.py": """
                from typing import Generic, TypeVar

                import requests

                T = TypeVar("T")

                class Debouncer(Generic[T]):
                    def __init__(self, cooldown):
                        self.cooldown = cooldown

                    def call(self):
                        requests.post("https://hub.example/refresh")
            """,
            "home/entries.py": """
                from home.debounce import Debouncer

                class Entries:
                    def __init__(self):
                        self._refresh = Debouncer[None](cooldown=10)

                    def discovered(self):
                        self._refresh.call()

                entries = Entries()
            """,
            "home/views.py": _view("home.entries", "entries", "entries.discovered()"),
        },
        job="home.entries.Entries.discovered",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="Calling a subscripted generic class (`Debouncer[None](...)`, PEP 560) makes an "
        "instance of the class itself, so the attribute it is stored in holds a `Debouncer` "
        "and `self._refresh.call()` runs `Debouncer.call`. A subscripted `CapWords` name is "
        "read as a class (PEP 8); an upper-case one (`HANDLERS[kind]`) stays an item of a "
        "table, whose values are followed as a table's are.",
    ),
    RuleExample(
        title="non_idempotent: a function handed to map(), reduce() or partial() runs here",
        files={
            "shop/__init__.py": "",
            "shop/jobs.py": """
                import functools

                import requests

                def post_receipt(order_id):
                    requests.post("https://mail.example/send", json={"order": order_id})

                def send_receipts(order_ids):
                    list(map(post_receipt, order_ids))
                    functools.reduce(lambda _, i: post_receipt(i), order_ids, None)
                    functools.partial(post_receipt, order_ids[0])()
            """,
            "shop/views.py": """
                import threading
                from shop.jobs import send_receipts

                def view(request):
                    threading.Thread(target=send_receipts, args=([1, 2],)).start()
            """,
        },
        job="shop.jobs.send_receipts",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="The builtins' `map`, `filter`, `sorted`, `min` and `max`, `functools.reduce` and "
        "`itertools.starmap` and its kin call their function argument in this process (a "
        "lambda's calls too), whereas an executor's `map` hands it to other threads (a spawn "
        "site of its own); `partial(post_receipt, x)()` runs `post_receipt`, and "
        '`operator.methodcaller("deliver")(order)` a method chosen by name, a gap.',
    ),
    RuleExample(
        title="unknown: a value declared with a TypeVar (or Any, a Callable) has no typing methods",
        files={
            "shop/__init__.py": "",
            "shop/jobs.py": """
                from typing import TypeVar

                ApiT = TypeVar("ApiT")

                class Device:
                    api: ApiT

                    def refresh(self):
                        self.api.auth()

                device = Device()

                def refresh_device(user_id):
                    device.refresh()
            """,
            "shop/views.py": """
                import threading
                from shop.jobs import refresh_device

                def view(request):
                    threading.Thread(target=refresh_device, args=(request.user.id,)).start()
            """,
        },
        job="shop.jobs.refresh_device",
        expected_verdict=V.UNKNOWN,
        expected_effect_kinds=set(),
        why="The catalogue's typing, typing_extensions, types, abc and enum entries are "
        "those modules' functions, the classes they make and those classes' own methods, "
        "not every attribute of a value declared with one of them: `self.api.auth()` on a "
        "`TypeVar`, a `Callable` called, a method of `Any` or of a `SimpleNamespace` run "
        "the project's own code, which the declaration does not name. `Final`, `ClassVar` "
        "and `Annotated` qualify a type (`Final[str]` is a str; a bare `Final` leaves the "
        "class to the value).",
    ),
    RuleExample(
        title="non_idempotent: a project context manager's __exit__ runs at the end of the with",
        files={
            "shop/__init__.py": "",
            "shop/jobs.py": """
                import requests

                class Ledger:
                    def __init__(self, order_id):
                        self.order_id = order_id

                    def __enter__(self):
                        return self

                    def __exit__(self, *exc):
                        requests.post("https://ledger.example/close", json={"order": self.order_id})

                def settle(order_id):
                    with Ledger(order_id):
                        pass
            """,
            "shop/views.py": """
                import threading
                from shop.jobs import settle

                def view(request):
                    threading.Thread(target=settle, args=(request.user.id,)).start()
            """,
        },
        job="shop.jobs.settle",
        expected_verdict=V.NON_IDEMPOTENT,
        expected_effect_kinds={K.HTTP_POST},
        why="`with Ledger(order_id):` runs `Ledger.__enter__` and `Ledger.__exit__` (the "
        "data model; `async with`: `__aenter__` and `__aexit__`), an inherited one too, "
        "when the call builds a project class; a library's context manager (`open`, "
        "`transaction.atomic`, a lock) is the catalogue's matter, as before.",
    ),
]
