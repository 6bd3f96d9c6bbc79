"""A bound method of a module-level service object moves as a wrapper job on that object.

``Thread(target=order_service.rebuild, ...)`` enqueues ``order_service_rebuild``,
written into the module that builds ``order_service``; any other bound method
stays, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from inventory.models import Argument, Pattern
from tests.unit.codemods.conftest import build_inventory

SERVICES = """class OrderService:
    def __init__(self, dsn):
        self.dsn = dsn

    def rebuild(self, order_id):
        return (self.dsn, order_id)

    def tune(self, level):
        self.level = level


order_service = OrderService("db")
tuned = OrderService("db")
tuned.tune(3)
"""

VIEWS = """import threading

from app.services import order_service, tuned


def view(order_id: int):
    threading.Thread(target=order_service.rebuild, args=(order_id,)).start()


def other(order_id: int):
    threading.Thread(target=tuned.rebuild, args=(order_id,)).start()


def local(order_id: int):
    svc = make()
    threading.Thread(target=svc.rebuild, args=(order_id,)).start()
"""


def _plan(root: Path, line: str, written: str) -> tuple[Status, str, dict[str, str]]:
    site = ("app/views.py", line, Pattern.THREAD, "app.services.OrderService.rebuild", written)
    inventory = build_inventory(root, [site])
    inventory.sites[0].arguments = [Argument(name="#0", source="order_id", serialisable=True)]
    inventory.jobs[0].parameters = ["order_id"]
    result = plan_apply(root, inventory, scanner=None)
    [outcome] = result.outcomes
    return outcome.status, outcome.reason, {c.path: c.after for c in result.changes}


def _app(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files({"app/__init__.py": "", "app/services.py": SERVICES, "app/views.py": VIEWS})


def test_a_module_level_service_object_moves_through_a_wrapper(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)

    status, reason, after = _plan(root, "order_service.rebuild", "order_service.rebuild")

    assert (status, reason) == (Status.REWRITTEN, "arguments: order_id: JSON")
    assert "order_service_rebuild" in after["app/views.py"]
    assert ".enqueue(order_id)" in after["app/views.py"]
    assert "from app.services import order_service_rebuild, tuned\n" in after["app/views.py"]
    services = after["app/services.py"]
    assert '@job(pool="batch", idempotent=True)\ndef order_service_rebuild(order_id):\n' in services
    assert "    return order_service.rebuild(order_id)\n" in services
    assert services.index("order_service = OrderService") < services.index("def order_service_")


def test_other_bound_methods_stay_with_the_reason(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    cases = {
        "tuned.rebuild": "is changed at import time (line 14)",
        "svc.rebuild": "`svc.rebuild` is called on `svc`, which is neither a module-level object",
    }
    for written, why in cases.items():
        status, reason, after = _plan(root, written, written)

        assert status is Status.SKIPPED and after == {}, written
        assert why in reason and "bound method" in reason, reason


STORE = """from app.limits import throttle


class Ledger:
    def __init__(self, dsn):
        self.dsn = dsn

    @throttle(10)
    async def touch(self, uid: str, db=None) -> None:
        return None

    @property
    def state(self) -> str:
        return self.dsn

    async def again(self, uid: str) -> None:
        await self.touch(uid)


Ledgers = Ledger("db")  # the one ledger every module imports
"""

TASKS = """import asyncio

from app.store import Ledgers


async def seen(user):
    asyncio.create_task(Ledgers.touch(user.id))


async def mine(ledger, user):
    asyncio.create_task(ledger.touch(user.id))
"""


def _task_plan(root: Path, fragment: str, written: str) -> tuple[Status, str, dict[str, str]]:
    site = ("app/tasks.py", fragment, Pattern.ASYNCIO_TASK, "app.store.Ledger.touch", written)
    inventory = build_inventory(root, [site])
    inventory.sites[0].arguments = [Argument(name="#0", source="user.id", serialisable=None)]
    result = plan_apply(root, inventory, scanner=None)
    [outcome] = result.outcomes
    return outcome.status, outcome.reason, {c.path: c.after for c in result.changes}


def test_a_task_on_an_imported_singleton_moves_with_its_literal_defaults_and_decorator(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    files = {
        "app/__init__.py": "",
        "app/limits.py": "def throttle(n):\n    return lambda fn: fn\n",
        "app/store.py": STORE,
        "app/tasks.py": TASKS,
    }
    root = write_files(files)

    status, reason, after = _task_plan(root, "Ledgers.touch(user.id)", "Ledgers.touch(user.id)")

    assert status is Status.REWRITTEN, reason
    tasks = after["app/tasks.py"]
    assert "Ledgers_touch.options(inline=InlineShape.TASK).enqueue(user.id)" in tasks
    assert "from app.store import Ledgers_touch\n" in tasks
    store = after["app/store.py"]
    assert "async def Ledgers_touch(uid: str, db=None):\n" in store
    assert "    return await Ledgers.touch(uid, db)\n" in store
    for text in after.values():
        compile(text, "moved.py", "exec")


def test_a_task_on_an_instance_that_is_not_module_level_stays(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    files = {
        "app/__init__.py": "",
        "app/limits.py": "def throttle(n):\n    return lambda fn: fn\n",
        "app/store.py": STORE,
        "app/tasks.py": TASKS,
    }
    root = write_files(files)

    status, reason, after = _task_plan(root, "ledger.touch(user.id)", "ledger.touch(user.id)")

    assert status is Status.SKIPPED and after == {}
    assert "is called on `ledger`, which is neither a module-level object" in reason
