"""Finding the jobs on real shapes: spawn wrappers, wider request handlers, decoy filters.

Each source below is a small reproduction written for the test of a shape met in real
packages (never their code).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from inventory import Inventory, Pattern, scan
from inventory._extract import extract_source
from inventory.models import Framework


def sites(source: str, module: str = "app") -> list[tuple[int, Pattern, str | None]]:
    summary = extract_source(textwrap.dedent(source), "app.py", module)
    return [(s.span.line, s.pattern, s.target) for s in summary.sites]


def handlers(source: str, module: str = "shop.pages") -> dict[str, Framework | None]:
    summary = extract_source(textwrap.dedent(source), "x.py", module)
    return {f.qualname.removeprefix(f"{module}."): f.handler for f in summary.functions}


def scanned(tmp_path: Path, files: dict[str, str]) -> Inventory:
    for rel, text in {"app/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan(tmp_path, use_cache=False, jobs=1)


# -- a function named like a Celery signature method is still a job ---------------------


@pytest.mark.parametrize("name", ["f", "s", "si", "delay", "apply_async"])
def test_a_function_named_s_is_found_like_one_named_f(name: str) -> None:
    found = sites(
        f"""
        import threading
        from django.db import transaction

        def {name}(order_id): ...

        def view(request, order_id):
            threading.Thread(target={name}, args=(order_id,)).start()
            transaction.on_commit({name})
        """
    )
    assert [(p, t) for _, p, t in found] == [
        (Pattern.THREAD, f"app.{name}"),
        (Pattern.ON_COMMIT, f"app.{name}"),
    ]


def test_a_celery_signature_method_still_leaves_the_process() -> None:
    found = sites(
        """
        from django.db import transaction
        from shop.tasks import send_receipt

        def view(request, order_id):
            transaction.on_commit(send_receipt.s(order_id).delay)
            transaction.on_commit(lambda: send_receipt.delay(order_id))
        """
    )
    assert found == []


# -- spawn wrappers ----------------------------------------------------------------------

WRAPPERS = """
import asyncio
import logging
import threading

_TASKS = set()
log = logging.getLogger(__name__)


def create_background_task(coro, name=None):
    task = asyncio.create_task(coro, name=name)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
    return task


def run_later(delay, fn, *args):
    threading.Timer(delay, fn, args=args).start()


def soon(fn):
    run_later(0, fn)
"""


def test_a_project_spawn_wrapper_is_a_spawn_primitive_for_its_callers(tmp_path: Path) -> None:
    inventory = scanned(
        tmp_path,
        {
            "app/background.py": WRAPPERS,
            "app/views.py": """
            from app.background import create_background_task, run_later, soon

            async def notify(user_id): ...

            def cleanup(): ...

            async def signup(request, user_id):
                create_background_task(notify(user_id), name="notify")
                run_later(5, cleanup)
                soon(cleanup)
            """,
        },
    )
    found = [(s.location.path, s.location.line, s.pattern, s.job) for s in inventory.sites]
    assert found == [
        ("app/views.py", 9, Pattern.ASYNCIO_TASK, "app.views.notify"),
        ("app/views.py", 10, Pattern.THREAD, "app.views.cleanup"),  # the job is the second one
        ("app/views.py", 11, Pattern.THREAD, "app.views.cleanup"),  # a wrapper of a wrapper
    ]


def test_an_unused_wrapper_keeps_its_own_unknown_site(tmp_path: Path) -> None:
    """``run_later`` is used (by ``soon``), so its site goes; nothing calls ``soon``."""
    inventory = scanned(tmp_path, {"app/background.py": WRAPPERS})
    assert {(s.location.line, s.job) for s in inventory.sites} == {(11, "unknown"), (22, "unknown")}


# -- wider request handlers ----------------------------------------------------------------


def test_helpers_a_view_calls_on_self_run_inside_the_request() -> None:
    found = handlers(
        """
        from django.views.generic import FormView

        class Checkout(FormView):
            def post(self, request):
                return self.submit(request.POST)

            def submit(self, data):
                return self._charge(data)

            def _charge(self, data): ...

            def unused(self): ...
        """
    )
    assert found["Checkout.post"] is Framework.DJANGO
    assert found["Checkout.submit"] is Framework.DJANGO
    assert found["Checkout._charge"] is Framework.DJANGO
    assert found["Checkout.unused"] is None


def test_code_handed_the_django_request_runs_inside_it() -> None:
    found = handlers(
        """
        from django.shortcuts import render

        class FormPage:
            def serve(self, request, *args):
                return render(request, "page.html")

            def get_context(self, value): ...

            @staticmethod
            def build(request): ...

        def client_ip(request): ...

        def unrelated(user): ...
        """
    )
    assert found == {
        "FormPage.serve": Framework.DJANGO,
        "FormPage.get_context": None,
        "FormPage.build": Framework.DJANGO,
        "client_ip": Framework.DJANGO,
        "unrelated": None,
    }


def test_a_request_parameter_without_django_is_not_a_handler() -> None:
    found = handlers("def log_request(request): ...\n")
    assert found == {"log_request": None}


# -- decoy filters -------------------------------------------------------------------------


def test_tasks_collected_in_a_list_then_waited_for_are_not_background_work() -> None:
    found = sites(
        """
        import asyncio

        async def ask(model): ...

        async def fastest(models):
            pending = []
            for model in models:
                task = asyncio.create_task(ask(model))
                pending.append(task)
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            return done

        async def forgotten(models):
            kept = []
            task = asyncio.create_task(ask(models[0]))
            kept.append(task)
        """
    )
    assert found == [(16, Pattern.ASYNCIO_TASK, "app.ask")]


def test_a_task_made_to_memoise_an_awaitable_is_not_a_job() -> None:
    found = sites(
        """
        import asyncio
        from functools import lru_cache

        def cached_coroutine(make):
            @lru_cache(maxsize=64)
            def wrapper(*args):
                return asyncio.create_task(make(*args))
            return wrapper

        async def load(key): ...

        _results_cache = {}

        def shared(key):
            _results_cache[key] = asyncio.create_task(load(key))
            return _results_cache[key]

        def started(jobs, key):
            jobs[key] = asyncio.create_task(load(key))
        """
    )
    assert found == [(20, Pattern.ASYNCIO_TASK, "app.load")]


def test_create_task_on_a_loop_reached_through_a_call() -> None:
    found = sites(
        """
        from app.context import current

        async def persist(step): ...

        def on_event(step):
            current.get().loop.create_task(persist(step))
        """
    )
    assert found == [(7, Pattern.ASYNCIO_TASK, "app.persist")]
