"""BackgroundTasks, on_commit, Django and blinker signals, and schedulers."""

from __future__ import annotations

from inventory.detector_examples._model import B, F, L, P, example
from inventory.models import Pattern
from inventory.summary import TargetKind

BACKGROUND = [
    example(
        Pattern.BACKGROUND_TASKS,
        "FastAPI BackgroundTasks parameter",
        [("app.send_welcome", F)],
        "Runs after the response is sent, in the web process.",
        """
from fastapi import BackgroundTasks, FastAPI

app = FastAPI()

def send_welcome(email): ...

@app.post("/signup")
async def signup(email: str, background_tasks: BackgroundTasks):
    background_tasks.add_task(send_welcome, email)
""",
    ),
    example(
        Pattern.BACKGROUND_TASKS,
        "Starlette BackgroundTask object",
        [("app.audit", F)],
        "A BackgroundTask attached to a response is the same pattern.",
        """
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse

def audit(user_id): ...

async def profile(request):
    user_id = request.path_params["user_id"]
    return JSONResponse({}, background=BackgroundTask(audit, user_id))
""",
    ),
    example(
        Pattern.BACKGROUND_TASKS,
        "Relative import and partial",
        [("mail.send", P)],
        "from .mail import send is resolved against the module.",
        """
from functools import partial

from fastapi import BackgroundTasks

from .mail import send

def invite(email: str, tasks: BackgroundTasks):
    tasks.add_task(partial(send, to=email))
""",
    ),
    example(
        Pattern.BACKGROUND_TASKS,
        "Constructed BackgroundTasks",
        [("app.cleanup", F)],
        "An instance built in the function is typed by its constructor.",
        """
from starlette.background import BackgroundTasks

def cleanup(path): ...

def download(path):
    tasks = BackgroundTasks()
    tasks.add_task(cleanup, path)
    return tasks
""",
    ),
    example(
        Pattern.BACKGROUND_TASKS,
        "INVALID: add_task on an unknown object",
        [],
        "Without a BackgroundTasks type, add_task is a look-alike.",
        """
def plan(todo, title):
    todo.add_task(title)
""",
    ),
    example(
        Pattern.BACKGROUND_TASKS,
        "INVALID: Celery delay",
        [],
        "Celery already runs the work out of process.",
        """
from .tasks import notify

def follow(user_id):
    notify.delay(user_id)
""",
    ),
]

ON_COMMIT = [
    example(
        Pattern.ON_COMMIT,
        "on_commit with a lambda",
        [("app.send_confirmation", L)],
        "Runs after the transaction commits, still inside the request.",
        """
from django.db import transaction

def send_confirmation(order_id): ...

def place(order):
    transaction.on_commit(lambda: send_confirmation(order.id))
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "Imported on_commit with a partial",
        [("app.reindex", P)],
        "from django.db.transaction import on_commit is resolved.",
        """
from functools import partial

from django.db.transaction import on_commit

def reindex(product_id): ...

def save_product(product_id):
    on_commit(partial(reindex, product_id))
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "on_commit with a function",
        [("app.clear_cache", F)],
        "A plain function reference.",
        """
from django.db import transaction

def clear_cache(): ...

def update_prices():
    transaction.on_commit(clear_cache)
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "on_commit with a bound method",
        [("app.Checkout.notify", B)],
        "self.notify resolves to the method.",
        """
import django.db.transaction

class Checkout:
    def notify(self): ...

    def done(self):
        django.db.transaction.on_commit(self.notify)
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "INVALID: Celery delay_on_commit",
        [],
        "Celery's delay_on_commit is already out of process.",
        """
from .tasks import send_confirmation

def place(order_id):
    send_confirmation.delay_on_commit(order_id)
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "INVALID: on_commit that enqueues a Celery task",
        [],
        "The lambda only hands the work to Celery, which already runs it out of process.",
        """
from django.db import transaction

from .tasks import send_confirmation

def place(order):
    transaction.on_commit(lambda: send_confirmation.delay(order.id))
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "A job named like a Celery method",
        [("app.s", F), ("app.delay", F)],
        "Only a method of a task (send.s, send.delay) leaves the process: a function named s or "
        "delay is a job like one named f.",
        """
from django.db import transaction

def s(): ...

def delay(): ...

def place(order):
    transaction.on_commit(s)
    transaction.on_commit(delay)
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "INVALID: on_commit of another library",
        [],
        "Only django.db.transaction.on_commit is this pattern.",
        """
def save(hooks, f):
    hooks.on_commit(f)
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "on_commit of a library callable's partial",
        [("django.core.files.storage.default_storage.delete", P), ("app.purge_thumbnails", P)],
        "The partial wraps a method of an imported library object: the job is that library "
        "callable, judged like any library call. A local variable holding the partial is "
        "followed when it is assigned once.",
        """
from functools import partial

from django.core.files.storage import default_storage
from django.db import transaction

def purge_thumbnails(name): ...

def replace_image(old_name):
    transaction.on_commit(partial(default_storage.delete, old_name), robust=True)
    cleanup = partial(purge_thumbnails, old_name)
    transaction.on_commit(cleanup)
""",
    ),
    example(
        Pattern.ON_COMMIT,
        "on_commit of what a project context manager yields",
        [("app.hold", TargetKind.YIELDED)],
        "The name is bound by a with statement: the site names the context manager. When it "
        "is a project @contextmanager (or @asynccontextmanager) generator whose every yield "
        "gives the same function, that function is the job (here the closure "
        "app.hold.<locals>.release, classified like any job). Any other context manager, a "
        "yield of something else or different yields: unknown, with the reason.",
        """
from contextlib import contextmanager

from django.core.cache import cache
from django.db import transaction

@contextmanager
def hold(key):
    def release():
        cache.delete(key)

    try:
        yield release
    finally:
        release()

def rename(key):
    with hold(key) as release, transaction.atomic():
        transaction.on_commit(release)
""",
    ),
]

SIGNALS = [
    example(
        Pattern.SIGNAL_RECEIVER,
        "@receiver decorator",
        [("app.order_saved", F)],
        "Django calls the receiver synchronously inside save().",
        """
from django.db.models.signals import post_save
from django.dispatch import receiver

from .models import Order

@receiver(post_save, sender=Order)
def order_saved(sender, instance, created, **kwargs): ...
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "signal.connect",
        [("app.index_product", F)],
        "connect() on a Django model signal.",
        """
from django.db.models import signals

def index_product(sender, instance, **kwargs): ...

signals.post_save.connect(index_product, sender="shop.Product")
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "Custom Signal instance",
        [("app.send_invoice", F)],
        "A django.dispatch.Signal defined in the file.",
        """
from django.dispatch import Signal

order_paid = Signal()

def send_invoice(sender, order_id, **kwargs): ...

order_paid.connect(send_invoice)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "Core signal",
        [("app.flush_metrics", F)],
        "request_finished from django.core.signals.",
        """
from django.core.signals import request_finished

def flush_metrics(sender, **kwargs): ...

request_finished.connect(flush_metrics)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "INVALID: connect on other objects",
        [],
        "GUI signals and database connections are look-alikes.",
        """
def wire(button, db, handler):
    button.clicked.connect(handler)
    db.connect()
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "Signals in a loop, and a signal imported from another module",
        [("app.on_password_changed", F), ("app.send_invoice", F)],
        "A loop over a literal list of signals connects to each; a lowercase object imported "
        "into a Django file and connected to one of its functions is taken for a signal.",
        """
from django.dispatch import Signal

from shop.events import order_paid

password_changed = Signal()
password_set = Signal()

def on_password_changed(sender, **kwargs): ...

def send_invoice(sender, **kwargs): ...

for sig in [password_set, password_changed]:
    sig.connect(receiver=on_password_changed)

order_paid.connect(send_invoice)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "A receiver that only checks and raises is a veto",
        [("app.note_blocked_email", F)],
        "send() runs the receiver in the sender, which gets its exception at once (a form's "
        "clean, a permission check): block_banned_email only inspects its arguments and "
        "raises, so nothing is left to run later and it is not reported (the classifier drops "
        "one defined in another file too). A receiver that also does something before "
        "raising (note_blocked_email saves a row) stays a job.",
        """
from django.core.exceptions import ValidationError
from django.dispatch import Signal

from .models import Blocked
from .rules import is_banned

email_added = Signal()

def block_banned_email(sender, email, user, **kwargs):
    \"\"\"Refuse an address the rules ban.\"\"\"
    if not email:
        return
    reason = is_banned(email)
    if reason:
        raise ValidationError(reason)

def note_blocked_email(sender, email, user, **kwargs):
    if is_banned(email):
        Blocked.objects.create(email=email, user=user)
        raise ValidationError("blocked")

email_added.connect(block_banned_email)
email_added.connect(note_blocked_email)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "INVALID: lifecycle and Celery signals",
        [],
        "setting_changed (tests), pre/post_migrate (manage.py migrate) and class_prepared "
        "(import) never run in a request; Celery's signals fire inside the worker.",
        """
from celery.signals import task_failure
from django.core.signals import setting_changed
from django.db.models.signals import post_migrate
from django.dispatch import receiver

@receiver(setting_changed)
def reset_cache(**kwargs): ...

def create_permissions(**kwargs): ...

def report_failure(**kwargs): ...

post_migrate.connect(create_permissions)
task_failure.connect(report_failure)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "blinker signals: named, from a Namespace, connected with a sender",
        [("app.Relay.forward", B), ("app.notify_owner", F), ("app.audit", F)],
        "blinker's signal(name) and Namespace().signal(name) return signals; send() runs each "
        "receiver in the sender's thread, inside the request that sends it. connect(receiver, "
        "sender=...) and connect(receiver, weak=False) (a keyword only a signal's connect "
        "takes) register a receiver; so does connect on signal(name) at once.",
        """
from blinker import Namespace, signal

events = Namespace()
order_paid = events.signal("order-paid")

def notify_owner(sender, **extra): ...

def audit(sender, **extra): ...

class Relay:
    def __init__(self, feed):
        self.feed = feed
        feed.connect(self.forward, weak=False)

    def forward(self, sender, **extra): ...

order_paid.connect(notify_owner, sender="shop")
signal("refund-issued").connect(audit)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "Flask and its extensions' signals, by decorator and by hand",
        [("app.on_login", F), ("app.count_render", F), ("app.reset_cart", F), ("app.track", F)],
        "Flask's signals (flask.signals), Flask-Login's and Flask-Principal's are blinker "
        "signals. @sig.connect_via(sender) and @sig.connect decorate a receiver; "
        "connect_via(sender)(fn) is the decorator applied by hand; connect(fn, app) gives the "
        "sender by position.",
        """
from flask import Flask, template_rendered
from flask_login import user_logged_in, user_logged_out
from flask.signals import request_finished

app = Flask(__name__)

@user_logged_in.connect_via(app)
def on_login(sender, user, **extra): ...

@template_rendered.connect
def count_render(sender, template, context, **extra): ...

def reset_cart(sender, user, **extra): ...

def track(sender, response, **extra): ...

user_logged_out.connect_via(app)(reset_cart)
request_finished.connect(track, app)
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "A signal of another module, connected by decorator or by hand",
        [("app.dump_certificate", F), ("app.mail_receipt", F)],
        "The signal is made in another module (by a Namespace, signal(name) or Signal()), so "
        "its type is not known here. In a Flask file, a lowercase imported object connected "
        "to one of the file's functions is taken for a signal; in any other file it is a "
        "receiver to confirm, kept once the classifier finds the object is a signal where it "
        "is made (a pool's or a client's own connect is then no site).",
        """
from flask import current_app

from vault.issuing import certificate_issued
from shop.events import order_paid

def dump_certificate(sender, certificate, **kwargs):
    current_app.logger.info("issued %s", certificate)

def enable_dump():
    certificate_issued.connect(dump_certificate)

@order_paid.connect
def mail_receipt(sender, order_id, **kwargs): ...
""",
    ),
    example(
        Pattern.SIGNAL_RECEIVER,
        "INVALID: connect look-alikes, relays and plumbing in a Flask file",
        [],
        "A socket's connect takes an address and a database engine's nothing: neither is "
        "given a receiver, and neither object is a signal by type, factory or library. "
        "Celery's signals can decorate too, but fire inside the worker. A signal relayed to "
        "another (connect(other.send)) is no job: the other signal's receivers are. A receiver "
        "that only imports a module (so that the tasks it defines register) does no work.",
        """
import socket

from blinker import Namespace
from celery.signals import task_failure
from flask import Flask, request_started
from sqlalchemy import create_engine

from shop.signals import import_tasks

app = Flask(__name__)
engine = create_engine("sqlite://")
shop_request_started = Namespace().signal("request-started")
request_started.connect(shop_request_started.send)

def ping(host, port):
    conn = socket.socket()
    conn.connect((host, port))
    with engine.connect() as db:
        db.execute("select 1")

@task_failure.connect
def report_failure(sender, task_id, exception, **kwargs): ...

@import_tasks.connect
def load_tasks(sender, **kwargs):
    import shop.tasks  # noqa: F401
""",
    ),
]

SCHEDULER = [
    example(
        Pattern.SCHEDULER,
        "APScheduler add_job",
        [("app.purge_sessions", F)],
        "An in-process scheduler runs the job in the web process.",
        """
from apscheduler.schedulers.background import BackgroundScheduler

scheduler = BackgroundScheduler()

def purge_sessions(): ...

scheduler.add_job(purge_sessions, "interval", hours=1)
""",
    ),
    example(
        Pattern.SCHEDULER,
        "@scheduled_job decorator",
        [("app.nightly_report", F)],
        "The decorated function is the job.",
        """
from apscheduler.schedulers.blocking import BlockingScheduler

scheduler = BlockingScheduler()

@scheduler.scheduled_job("cron", hour=3)
def nightly_report(): ...
""",
    ),
    example(
        Pattern.SCHEDULER,
        "schedule.every().do()",
        [("app.sync_inventory", F)],
        "The schedule package's fluent API.",
        """
import schedule

def sync_inventory(region): ...

schedule.every(10).minutes.do(sync_inventory, "eu")
""",
    ),
    example(
        Pattern.SCHEDULER,
        "Text reference to the job",
        [("app.tasks.rebuild", F)],
        "APScheduler accepts 'module:function' strings.",
        """
from apscheduler.schedulers.background import BackgroundScheduler

def start():
    scheduler = BackgroundScheduler()
    scheduler.add_job("app.tasks:rebuild", "cron", hour=1)
    scheduler.start()
""",
    ),
    example(
        Pattern.SCHEDULER,
        "add_job with a partial",
        [("app.send_digest", P)],
        "The partial's bound arguments become the job's arguments.",
        """
from functools import partial

from apscheduler.schedulers.asyncio import AsyncIOScheduler

def send_digest(weekly): ...

def setup(scheduler: AsyncIOScheduler):
    scheduler.add_job(partial(send_digest, weekly=True), "cron", day_of_week="mon")
""",
    ),
    example(
        Pattern.SCHEDULER,
        "INVALID: add_job look-alike",
        [],
        "add_job on an object that is not an APScheduler scheduler.",
        """
def post(board, title):
    board.add_job(title)
""",
    ),
    example(
        Pattern.SCHEDULER,
        "Flask-APScheduler",
        [("app.ping", F), ("app.purge", F)],
        "@scheduler.task(...) schedules the function; Flask-APScheduler's add_job takes the id "
        "first and the function second.",
        """
from flask_apscheduler import APScheduler

scheduler = APScheduler()

@scheduler.task("interval", id="ping", seconds=30)
def ping(): ...

def purge(): ...

scheduler.add_job("purge", purge, trigger="cron", hour=3)
""",
    ),
    example(
        Pattern.SCHEDULER,
        "@repeat(every(...)) of the schedule package",
        [("app.refresh_rates", F)],
        "schedule's decorator registers the function with the default scheduler, like "
        "every(...).do(fn).",
        """
from schedule import every, repeat

@repeat(every(30).minutes)
def refresh_rates(): ...
""",
    ),
    example(
        Pattern.SCHEDULER,
        "A scheduler on self, and one of another module",
        [("app.Reports.weekly", B), ("app.expire_trials", F), ("app.rotate_keys", F)],
        "self.scheduler built in __init__ is typed; a scheduler imported from another module "
        "is taken for one from its name (noted in the site's detail). The job may be given as "
        "func=; @x.scheduled_job is APScheduler's decorator whatever x's module.",
        """
from apscheduler.schedulers.background import BackgroundScheduler

from billing.setup import scheduler

class Reports:
    def __init__(self):
        self.scheduler = BackgroundScheduler()

    def weekly(self): ...

    def start(self):
        self.scheduler.add_job(func=self.weekly, trigger="cron", day_of_week="sun")

def expire_trials(): ...

scheduler.add_job(expire_trials, "interval", hours=6)

@scheduler.scheduled_job("cron", hour=4)
def rotate_keys(): ...
""",
    ),
    example(
        Pattern.SCHEDULER,
        "Registrations reached indirectly",
        [("app.sync_feeds", F), ("app.prune", F), ("app.reindex", F)],
        "sync_to_async(scheduler.add_job)(f, ...) and to_thread(scheduler.add_job, f) run the "
        "registration in a thread: the site is the scheduled job, not a thread's; "
        "partial(scheduler.add_job, f, ...) names the job where the partial is made.",
        """
import asyncio
from functools import partial

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from asgiref.sync import sync_to_async

scheduler = AsyncIOScheduler()

def sync_feeds(): ...

def prune(days): ...

def reindex(): ...

async def on_startup():
    await sync_to_async(scheduler.add_job)(sync_feeds, "interval", minutes=10)
    await asyncio.to_thread(scheduler.add_job, prune, "cron", args=[30])
    register = partial(scheduler.add_job, reindex, "cron", hour=2)
    register()
""",
    ),
    example(
        Pattern.SCHEDULER,
        "INVALID: task and add_job look-alikes",
        [],
        "Celery's @app.task takes no trigger; add_job on a queue or a planner that is no "
        "scheduler (by type or name) is not a registration.",
        """
from celery import Celery

app = Celery("shop")

@app.task(bind=True)
def send_receipt(self, order_id): ...

def plan(queue, planner, title):
    queue.add_job(title)
    planner.add_schedule(title, "weekly")
""",
    ),
]
