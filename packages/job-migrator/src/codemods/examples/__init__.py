"""BEFORE / AFTER examples for every transformer: they are its tests and its docs.

Each example is one module, ``app.py``, that defines the job and calls it.
The site is recorded on the first line containing ``site_at`` (as the
scanner would record it). ``tests/unit/codemods/test_examples.py`` runs
every example through :func:`codemods.plan_apply` (``tools/apply_docs.py``
builds the inventory the scanner would give); ``docs/apply.md`` shows them
(``python -m tools.apply_docs`` regenerates that section).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codemods._types import Status
from inventory.models import Framework, Idempotency, Pattern

MODULE = "app"


@dataclass(frozen=True)
class Example:
    title: str
    pattern: Pattern
    before: str
    after: str  # equal to ``before`` when the site is left alone
    site_at: str
    job: str = "resize"
    status: Status = Status.REWRITTEN
    reason: str = ""  # a fragment of the reported reason
    verdict: Idempotency = Idempotency.IDEMPOTENT
    result_used_at: tuple[str, ...] = ()
    unserialisable: tuple[str, ...] = ()  # argument sources the scanner flags
    keys: dict[str, str] = field(default_factory=dict)
    target_source: str = ""  # how the scanner saw the target written, when aliased
    handler: Framework | None = None  # the scanner's verdict on the enclosing request handler


_JOB = "def resize(path, width=800):\n    ...\n"
_REGISTERED = 'from queue_runtime import job\n\n\n@job(pool="batch", idempotent=True)\n' + _JOB
# A site that keeps its inline shape (a thread, an executor, a task) imports InlineShape too.
_SHAPED = _REGISTERED.replace("import job", "import InlineShape, job")
_THREAD = "resize.options(inline=InlineShape.THREAD).enqueue"
_IN_POOL = "resize.options(inline=InlineShape.EXECUTOR, executor=POOL).enqueue"
_IN_LOOP = "resize.options(inline=InlineShape.EXECUTOR).enqueue"

# The status route a Flask 202 rewrite adds to the view's app (codemods._edits.flask_status).
_FLASK_STATUS = (
    '\n\n@app.route("/jobs/<int:job_id>")\ndef job_status(job_id):\n'
    '    """The status of a queued job, and its result once done (added by `migrator apply`)."""\n'
    "    try:\n        record = queue_runtime.get_job(job_id).record()\n"
    "    except queue_runtime.QueueError as exc:\n"
    '        abort(404, description=f"job {job_id}: {exc}")\n'
    "    return jsonify(\n        job_id=record.id,\n        name=record.name,\n"
    "        status=str(record.status),\n        result=record.result,\n        error=record.error,\n    )\n"
)

_TICK = "def refresh():\n    ...\n"
_APS = (
    "from apscheduler.schedulers.background import BackgroundScheduler\n\n"
    "scheduler = BackgroundScheduler()\n\n\n"
)
_TICKED = 'from queue_runtime import job\n\n\n@job(pool="batch", idempotent=True, {})\n' + _TICK
_APS_TICKED = (
    "from apscheduler.schedulers.background import BackgroundScheduler\n"
    "from queue_runtime import job\n\nscheduler = BackgroundScheduler()\n\n\n"
    '@job(pool="batch", idempotent=True, {})\n' + _TICK
)


# Scheduler registrations of idempotent jobs become periodic declarations (codemods._triggers).
PERIODIC: list[Example] = [
    Example(
        "schedule.every(N).minutes.do(fn): a periodic declaration",
        Pattern.SCHEDULER,
        "import schedule\n\n\n" + _TICK + "\n\nschedule.every(10).minutes.do(refresh)\n",
        _TICKED.format('every="10m"'),
        site_at="schedule.every",
        job="refresh",
    ),
    Example(
        "schedule.every().day.at(time, zone).do(fn): a cron declaration in that zone",
        Pattern.SCHEDULER,
        "import schedule\n\n\n"
        + _TICK
        + '\n\ndef install():\n    schedule.every().day.at("10:30", "Europe/Berlin").do(refresh)\n',
        _TICKED.format('cron="30 10 * * *", timezone="Europe/Berlin"')
        + "\n\ndef install():\n    pass\n",
        site_at="schedule.every",
        job="refresh",
    ),
    Example(
        "APScheduler add_job(fn, 'interval'): the registration goes, the scheduler stays",
        Pattern.SCHEDULER,
        _APS + _TICK + '\n\nscheduler.add_job(refresh, "interval", hours=1, minutes=30, id="r")\n'
        "scheduler.start()\n",
        _APS_TICKED.format('every="1h30m"') + "\n\nscheduler.start()\n",
        site_at="scheduler.add_job",
        job="refresh",
    ),
    Example(
        "APScheduler @scheduled_job('cron', ...): the decorator becomes @job(cron=...)",
        Pattern.SCHEDULER,
        _APS
        + '@scheduler.scheduled_job("cron", hour=3, day_of_week="mon-fri", timezone="UTC")\n'
        + _TICK,
        _APS_TICKED.format('cron="0 3 * * MON-FRI", timezone="UTC"'),
        site_at="@scheduler.scheduled_job",
        job="refresh",
    ),
    Example(
        "a jitter has no exact equivalent: skipped",
        Pattern.SCHEDULER,
        _APS + _TICK + '\n\nscheduler.add_job(refresh, "interval", minutes=5, jitter=30)\n',
        _APS + _TICK + '\n\nscheduler.add_job(refresh, "interval", minutes=5, jitter=30)\n',
        site_at="scheduler.add_job",
        job="refresh",
        status=Status.SKIPPED,
        reason="jitter= has no exact equivalent",
    ),
    Example(
        "a wall-clock time without a zone: skipped",
        Pattern.SCHEDULER,
        "import schedule\n\n\n" + _TICK + '\n\nschedule.every().day.at("10:30").do(refresh)\n',
        "import schedule\n\n\n" + _TICK + '\n\nschedule.every().day.at("10:30").do(refresh)\n',
        site_at="schedule.every",
        job="refresh",
        status=Status.SKIPPED,
        reason="host's local zone",
    ),
]

EXAMPLES: list[Example] = [
    Example(
        "direct call, result unused",
        Pattern.DIRECT_CALL,
        _JOB + "\n\ndef upload(path):\n    resize(path, width=400)  # keep me\n",
        _REGISTERED + "\n\ndef upload(path):\n    resize.enqueue(path, width=400)  # keep me\n",
        site_at="    resize(path, width=400)",
    ),
    Example(
        "aliased import, multi-line call with comments inside",
        Pattern.DIRECT_CALL,
        "from media import resize as shrink\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    shrink(\n        path,  # the original\n        width=400,\n    )\n",
        'from media import resize as shrink\nfrom queue_runtime import job\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + "\n\ndef upload(path):\n    shrink.enqueue(\n        path,  # the original\n        width=400,\n    )\n",
        site_at="shrink(",
        target_source="shrink",
    ),
    Example(
        "the import joins the third-party section, sorted as isort / ruff would",
        Pattern.DIRECT_CALL,
        "import os\n\nimport httpx\nfrom PIL import Image\nfrom redis import Redis\n\n"
        "from .storage import bucket\n\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    resize(path, width=400)\n",
        "import os\n\nimport httpx\nfrom PIL import Image\nfrom queue_runtime import job\n"
        "from redis import Redis\n\nfrom .storage import bucket\n\n\n"
        + _REGISTERED.split("\n\n\n", 1)[1]
        + "\n\ndef upload(path):\n    resize.enqueue(path, width=400)\n",
        site_at="    resize(path, width=400)",
    ),
    Example(
        "no third-party import yet: a section of its own, before the project's imports",
        Pattern.DIRECT_CALL,
        '"""Uploads."""\n\nimport os\n\nfrom .storage import bucket\n\n\n'
        + _JOB
        + "\n\ndef upload(path):\n    resize(path, width=400)\n",
        '"""Uploads."""\n\nimport os\n\nfrom queue_runtime import job\n\nfrom .storage import bucket\n\n\n'
        + _REGISTERED.split("\n\n\n", 1)[1]
        + "\n\ndef upload(path):\n    resize.enqueue(path, width=400)\n",
        site_at="    resize(path, width=400)",
    ),
    Example(
        "direct call whose result is used: manual",
        Pattern.DIRECT_CALL,
        _JOB + "\n\ndef upload(path):\n    thumb = resize(path)\n    return {'thumb': thumb}\n",
        _JOB + "\n\ndef upload(path):\n    thumb = resize(path)\n    return {'thumb': thumb}\n",
        site_at="thumb = resize",
        status=Status.MANUAL,
        reason="uses the result",
        result_used_at=("return {'thumb'",),
    ),
    Example(
        "thread with args and kwargs",
        Pattern.THREAD,
        "import threading\n\n"
        + _JOB
        + '\n\ndef upload(path):\n    threading.Thread(target=resize, args=(path,), kwargs={"width": 400}).start()\n',
        _SHAPED + f"\n\ndef upload(path):\n    {_THREAD}(path, width=400)\n",
        site_at="Thread(",
    ),
    Example(
        "aliased Thread, partial target, assigned then started",
        Pattern.THREAD,
        "from functools import partial\nfrom threading import Thread as T\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    # resize in the background\n    t = T(target=partial(resize, path), daemon=True)\n    t.start()\n",
        _SHAPED + f"\n\ndef upload(path):\n    # resize in the background\n    {_THREAD}(path)\n",
        site_at="t = T(",
    ),
    Example(
        "thread kept when the thread object is joined",
        Pattern.THREAD,
        "from threading import Thread\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    t = Thread(target=resize, args=(path,))\n    t.start()\n    t.join()\n",
        "from threading import Thread\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    t = Thread(target=resize, args=(path,))\n    t.start()\n    t.join()\n",
        site_at="t = Thread(",
        status=Status.SKIPPED,
        reason="used after start()",
    ),
    Example(
        "lambda target",
        Pattern.THREAD,
        "from threading import Thread\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    Thread(target=lambda: resize(path, 200)).start()\n",
        _SHAPED + f"\n\ndef upload(path):\n    {_THREAD}(path, 200)\n",
        site_at="Thread(",
    ),
    Example(
        "executor.submit with the future unused",
        Pattern.EXECUTOR_SUBMIT,
        "from concurrent.futures import ThreadPoolExecutor\n\nPOOL = ThreadPoolExecutor()\n\n"
        + _JOB
        + "\n\ndef upload(path):\n    POOL.submit(resize, path, width=400)\n",
        'from concurrent.futures import ThreadPoolExecutor\n\nfrom queue_runtime import InlineShape, job\n\nPOOL = ThreadPoolExecutor()\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + f"\n\ndef upload(path):\n    {_IN_POOL}(path, width=400)\n",
        site_at="POOL.submit",
    ),
    Example(
        "executor.map",
        Pattern.EXECUTOR_SUBMIT,
        "from concurrent.futures import ThreadPoolExecutor\n\nPOOL = ThreadPoolExecutor()\n\n"
        + _JOB
        + "\n\ndef upload(paths):\n    POOL.map(resize, paths)  # fan out\n",
        'from concurrent.futures import ThreadPoolExecutor\n\nfrom queue_runtime import InlineShape, job\n\nPOOL = ThreadPoolExecutor()\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + f"\n\ndef upload(paths):\n    for item in paths:  # fan out\n        {_IN_POOL}(item)\n",
        site_at="POOL.map",
    ),
    Example(
        "FastAPI BackgroundTasks: the job is queued after the response, and runs there while inline",
        Pattern.BACKGROUND_TASKS,
        "from fastapi import BackgroundTasks, FastAPI\n\napp = FastAPI()\n\n"
        + _JOB
        + '\n\n@app.post("/upload")\nasync def upload(path: str, background_tasks: BackgroundTasks):\n    background_tasks.add_task(resize, path, width=400)\n    return {"ok": True}\n',
        'from fastapi import BackgroundTasks, FastAPI\nfrom queue_runtime import job\n\napp = FastAPI()\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + '\n\n@app.post("/upload")\nasync def upload(path: str, background_tasks: BackgroundTasks):\n    background_tasks.add_task(resize.enqueue, path, width=400)\n    return {"ok": True}\n',
        site_at="add_task",
    ),
    Example(
        "FastAPI BackgroundTasks, a coroutine job: a task on the loop; the parameter goes when nothing else uses it",
        Pattern.BACKGROUND_TASKS,
        "from fastapi import BackgroundTasks, FastAPI\n\napp = FastAPI()\n\nasync def notify(user_id):\n    ...\n"
        + '\n\n@app.post("/signup")\nasync def signup(user_id: int, background_tasks: BackgroundTasks):\n    background_tasks.add_task(notify, user_id)\n    return {"ok": True}\n',
        'from fastapi import FastAPI\nfrom queue_runtime import InlineShape, job\n\napp = FastAPI()\n\n@job(pool="batch", idempotent=True)\nasync def notify(user_id):\n    ...\n'
        + '\n\n@app.post("/signup")\nasync def signup(user_id: int):\n    notify.options(inline=InlineShape.TASK).enqueue(user_id)\n    return {"ok": True}\n',
        site_at="add_task",
        job="notify",
    ),
    Example(
        "asyncio.create_task",
        Pattern.ASYNCIO_TASK,
        "import asyncio\n\nasync def resize(path, width=800):\n    ...\n\n\nasync def upload(path):\n    asyncio.create_task(resize(path))\n",
        'from queue_runtime import InlineShape, job\n\n\n@job(pool="batch", idempotent=True)\nasync def resize(path, width=800):\n    ...\n\n\nasync def upload(path):\n    resize.options(inline=InlineShape.TASK).enqueue(path)\n',
        site_at="create_task",
    ),
    Example(
        "awaited asyncio.to_thread whose value is discarded",
        Pattern.RUN_IN_EXECUTOR,
        "import asyncio\n\n"
        + _JOB
        + "\n\nasync def upload(path):\n    await asyncio.to_thread(resize, path)\n",
        _SHAPED + f"\n\nasync def upload(path):\n    {_IN_LOOP}(path)\n",
        site_at="to_thread",
    ),
    Example(
        "loop.run_in_executor",
        Pattern.RUN_IN_EXECUTOR,
        "import asyncio\n\n"
        + _JOB
        + "\n\nasync def upload(path):\n    loop = asyncio.get_running_loop()\n    loop.run_in_executor(None, resize, path)\n",
        _SHAPED + f"\n\nasync def upload(path):\n    {_IN_LOOP}(path)\n",
        site_at="run_in_executor",
    ),
    Example(
        "FastAPI handler that returns the result: 202 and a status endpoint",
        Pattern.DIRECT_CALL,
        "from fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        + _JOB
        + '\n\n@app.post("/images")\ndef upload(path: str):\n    thumb = resize(path)\n    return {"thumb": thumb}\n',
        "from fastapi import FastAPI\nfrom fastapi.responses import JSONResponse\nfrom queue_runtime import job\n"
        "\nimport job_status\n\napp = FastAPI()\napp.include_router(job_status.router)\n\n\n"
        + _REGISTERED.split("\n\n\n", 1)[1]
        + '\n\n@app.post("/images")\ndef upload(path: str):\n    job_handle = resize.enqueue(path)\n'
        '    return JSONResponse({"job_id": job_handle.id, "status_url": f"/jobs/{job_handle.id}"}, status_code=202)\n',
        site_at="thumb = resize",
        result_used_at=('return {"thumb"',),
        handler=Framework.FASTAPI,
    ),
    Example(
        "FastAPI handler that uses the result for more work: manual",
        Pattern.DIRECT_CALL,
        "from fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        + _JOB
        + '\n\n@app.post("/images")\ndef upload(path: str):\n    thumb = resize(path)\n    print(thumb)\n    return {"thumb": thumb}\n',
        "from fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        + _JOB
        + '\n\n@app.post("/images")\ndef upload(path: str):\n    thumb = resize(path)\n    print(thumb)\n    return {"thumb": thumb}\n',
        site_at="thumb = resize",
        result_used_at=("print(thumb)", 'return {"thumb"'),
        handler=Framework.FASTAPI,
        status=Status.MANUAL,
        reason="used beyond the response",
    ),
    Example(
        "Flask view that returns the result: 202 and a status route on its app",
        Pattern.DIRECT_CALL,
        "from flask import Flask, render_template\n\napp = Flask(__name__)\n\n\n"
        + _JOB
        + '\n\n@app.post("/images")\ndef upload():\n    thumb = resize("in.png")\n'
        '    return render_template("thumb.html", thumb=thumb)\n',
        "import queue_runtime\nfrom flask import Flask, abort, jsonify, url_for\nfrom queue_runtime import job\n"
        "\napp = Flask(__name__)\n\n\n"
        + _REGISTERED.split("\n\n\n", 1)[1]
        + '\n\n@app.post("/images")\ndef upload():\n    job_handle = resize.enqueue("in.png")\n'
        '    return jsonify(job_id=job_handle.id, status_url=url_for(".job_status", job_id=job_handle.id)), 202\n'
        + _FLASK_STATUS,
        site_at="thumb = resize",
        result_used_at=("return render_template",),
        handler=Framework.FLASK,
    ),
    Example(
        "Flask view whose result decides the flash message: manual",
        Pattern.DIRECT_CALL,
        "from flask import Flask, flash, redirect\n\napp = Flask(__name__)\n\n\n"
        + _JOB
        + '\n\n@app.post("/images")\ndef upload():\n    if resize("in.png"):\n'
        '        flash("resized")\n    return redirect("/")\n',
        "from flask import Flask, flash, redirect\n\napp = Flask(__name__)\n\n\n"
        + _JOB
        + '\n\n@app.post("/images")\ndef upload():\n    if resize("in.png"):\n'
        '        flash("resized")\n    return redirect("/")\n',
        site_at='if resize("in.png")',
        result_used_at=('if resize("in.png")',),
        handler=Framework.FLASK,
        status=Status.MANUAL,
        reason="uses the result",
    ),
    Example(
        "Django view that redirects on the result: manual",
        Pattern.DIRECT_CALL,
        "from django.shortcuts import redirect\n\n\n"
        + _JOB
        + '\n\ndef upload(request):\n    thumb = resize("in.png")\n    return redirect(thumb)\n',
        "from django.shortcuts import redirect\n\n\n"
        + _JOB
        + '\n\ndef upload(request):\n    thumb = resize("in.png")\n    return redirect(thumb)\n',
        site_at="thumb = resize",
        result_used_at=("return redirect",),
        handler=Framework.DJANGO,
        status=Status.MANUAL,
        reason="uses the result",
    ),
    Example(
        "Django view that tells the user when the job fails: manual",
        Pattern.DIRECT_CALL,
        "from django.contrib import messages\n\n\n"
        + _JOB
        + '\n\ndef upload(request):\n    try:\n        resize("in.png")\n'
        + '    except OSError:\n        messages.error(request, "Resizing failed")\n',
        "from django.contrib import messages\n\n\n"
        + _JOB
        + '\n\ndef upload(request):\n    try:\n        resize("in.png")\n'
        + '    except OSError:\n        messages.error(request, "Resizing failed")\n',
        site_at='resize("in.png")',
        handler=Framework.DJANGO,
        status=Status.MANUAL,
        reason="the caller handles the job's exceptions",
    ),
    Example(
        "transaction.on_commit with a lambda",
        Pattern.ON_COMMIT,
        "from django.db import transaction\n\n"
        + _JOB
        + "\n\ndef upload(photo):\n    transaction.on_commit(lambda: resize(photo.path))\n",
        'from django.db import transaction\nfrom queue_runtime import job\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + "\n\ndef upload(photo):\n    transaction.on_commit(lambda: resize.enqueue(photo.path))\n",
        site_at="on_commit",
    ),
    Example(
        "on_commit with partial: arguments still bound at registration",
        Pattern.ON_COMMIT,
        "from functools import partial\n\nfrom django.db import transaction\n\n"
        + _JOB
        + "\n\ndef upload(photo):\n    transaction.on_commit(partial(resize, photo.path, width=400))\n",
        'from functools import partial\n\nfrom django.db import transaction\nfrom queue_runtime import job\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + "\n\ndef upload(photo):\n    transaction.on_commit(partial(resize.enqueue, photo.path, width=400))\n",
        site_at="on_commit",
    ),
    Example(
        "signal receiver that calls the job",
        Pattern.SIGNAL_RECEIVER,
        "from django.db.models.signals import post_save\nfrom django.dispatch import receiver\n\n"
        + _JOB
        + '\n\n@receiver(post_save, sender="Photo")\ndef on_photo_saved(sender, instance, **kwargs):\n    resize(instance.path)\n',
        'from django.db.models.signals import post_save\nfrom django.dispatch import receiver\nfrom queue_runtime import job\n\n@job(pool="batch", idempotent=True)\n'
        + _JOB
        + '\n\n@receiver(post_save, sender="Photo")\ndef on_photo_saved(sender, instance, **kwargs):\n    resize.enqueue(instance.path)\n',
        site_at="@receiver",
    ),
    Example(
        "needs_key job with a declared key template",
        Pattern.DIRECT_CALL,
        "def send_receipt(order_id, email):\n    ...\n\n\ndef checkout(order):\n    send_receipt(order.id, order.email)\n",
        'from queue_runtime import job\n\n\n@job(pool="batch")\ndef send_receipt(order_id, email):\n    ...\n\n\ndef checkout(order):\n    send_receipt.enqueue(order.id, order.email, idempotency_key=f"receipt-{order.id}")\n',
        site_at="send_receipt(order.id",
        job="send_receipt",
        verdict=Idempotency.NEEDS_KEY,
        keys={"app.send_receipt": "receipt-{order_id}"},
    ),
    Example(
        "needs_key job without a key: skipped",
        Pattern.DIRECT_CALL,
        "def send_receipt(order_id, email):\n    ...\n\n\ndef checkout(order):\n    send_receipt(order.id, order.email)\n",
        "def send_receipt(order_id, email):\n    ...\n\n\ndef checkout(order):\n    send_receipt(order.id, order.email)\n",
        site_at="send_receipt(order.id",
        job="send_receipt",
        verdict=Idempotency.NEEDS_KEY,
        status=Status.SKIPPED,
        reason="needs an idempotency key",
    ),
    Example(
        "non-idempotent job: never rewritten",
        Pattern.DIRECT_CALL,
        "def charge(order_id):\n    ...\n\n\ndef checkout(order):\n    charge(order.id)\n",
        "def charge(order_id):\n    ...\n\n\ndef checkout(order):\n    charge(order.id)\n",
        site_at="charge(order.id",
        job="charge",
        verdict=Idempotency.UNSAFE,
        status=Status.SKIPPED,
        reason="unsafe",
    ),
    Example(
        "unserialisable argument: moved, every call falls back to running in-process",
        Pattern.DIRECT_CALL,
        _JOB + "\n\ndef upload(request):\n    resize(request)\n",
        _REGISTERED + "\n\ndef upload(request):\n    resize.enqueue(request)\n",
        site_at="resize(request)",
        unserialisable=("request",),
    ),
    Example(
        "bound method: skipped",
        Pattern.DIRECT_CALL,
        "class Images:\n    def resize(self, path):\n        ...\n\n\ndef upload(images, path):\n    images.resize(path)\n",
        "class Images:\n    def resize(self, path):\n        ...\n\n\ndef upload(images, path):\n    images.resize(path)\n",
        site_at="images.resize(path)",
        status=Status.SKIPPED,
        reason="bound method",
    ),
    Example(
        "bound method of a dataclass instance: the method is the job, the instance its first argument",
        Pattern.DIRECT_CALL,
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Image:\n    path: str\n\n    def resize(self, width):\n        ...\n\n\ndef upload(path):\n    image = Image(path)\n    image.resize(400)\n",
        'from dataclasses import dataclass\n\nfrom queue_runtime import job\n\n\n@dataclass\nclass Image:\n    path: str\n\n    @job(pool="batch", idempotent=True)\n    def resize(self, width):\n        ...\n\n\ndef upload(path):\n    image = Image(path)\n    image.resize.enqueue(400)\n',
        site_at="image.resize(400)",
        job="Image.resize",
        target_source="image.resize",
    ),
    Example(
        "staticmethod: enqueued through the class",
        Pattern.DIRECT_CALL,
        "class Images:\n    @staticmethod\n    def resize(path):\n        ...\n\n\ndef upload(path):\n    Images.resize(path)\n",
        'from queue_runtime import job\n\n\nclass Images:\n    @staticmethod\n    @job(pool="batch", idempotent=True)\n    def resize(path):\n        ...\n\n\ndef upload(path):\n    Images.resize.enqueue(path)\n',
        site_at="Images.resize(path)",
    ),
    Example(
        "classmethod: registered above @classmethod, enqueued through the class",
        Pattern.DIRECT_CALL,
        "class Catalog:\n    @classmethod\n    def refresh(cls, url):\n        ...\n\n\ndef save(url):\n    Catalog.refresh(url)\n",
        'from queue_runtime import job\n\n\nclass Catalog:\n    @job(pool="batch", idempotent=True)\n    @classmethod\n    def refresh(cls, url):\n        ...\n\n\ndef save(url):\n    Catalog.refresh.enqueue(url)\n',
        site_at="Catalog.refresh(url)",
        job="Catalog.refresh",
        target_source="Catalog.refresh",
    ),
    Example(
        "periodic registration with arguments: skipped",
        Pattern.SCHEDULER,
        "import schedule\n\n" + _JOB + '\n\nschedule.every(10).minutes.do(resize, "all")\n',
        "import schedule\n\n" + _JOB + '\n\nschedule.every(10).minutes.do(resize, "all")\n',
        site_at="schedule.every",
        status=Status.SKIPPED,
        reason="a periodic job takes none",
    ),
    *PERIODIC,
]
