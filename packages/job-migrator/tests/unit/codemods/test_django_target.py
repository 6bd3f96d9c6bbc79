"""``[tool.migrator] target = "django-tasks"``: apply writes Django's ``@task`` and ``.enqueue()``.

Before/after strings on a small Django project; the sites Django's API cannot carry
(arguments not proven JSON, idempotency keys, methods) are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import ApplyOptions, plan_apply
from inventory.config import MigrationTarget
from inventory.models import Argument, Inventory, Pattern

TASKS = """\
import logging

log = logging.getLogger(__name__)


def make_thumbnail(image_id, size):
    log.info("thumbnail %s", image_id)


def index_order(order):
    log.info("index %s", order)
"""

VIEWS = """\
import threading

from shop.tasks import index_order, make_thumbnail


def upload(request):
    threading.Thread(target=make_thumbnail, args=(7, 128)).start()
    return "ok"


def checkout(request):
    index_order(request.order)
    return "ok"
"""

TASKS_AFTER = """\
import logging

from django.tasks import task

log = logging.getLogger(__name__)


@task(idempotent=True)
def make_thumbnail(image_id, size):
    log.info("thumbnail %s", image_id)


def index_order(order):
    log.info("index %s", order)
"""

VIEWS_AFTER = """\
from shop.tasks import index_order, make_thumbnail


def upload(request):
    make_thumbnail.enqueue(7, 128)
    return "ok"


def checkout(request):
    index_order(request.order)
    return "ok"
"""

PYPROJECT = '[tool.migrator]\ntarget = "django-tasks"\n'


@pytest.fixture
def project(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Callable[..., Inventory]
) -> tuple[Path, Inventory]:
    files = {"shop/__init__.py": "", "shop/tasks.py": TASKS, "shop/views.py": VIEWS}
    root = write_files({**files, "pyproject.toml": PYPROJECT})
    sites = [
        ("shop/views.py", "threading.Thread(", Pattern.THREAD, "shop.tasks.make_thumbnail"),
        ("shop/views.py", "index_order(request", Pattern.DIRECT_CALL, "shop.tasks.index_order"),
    ]
    inventory = build_inventory(root, sites)
    arguments = {  # what the scan records for each site's arguments
        "shop.tasks.make_thumbnail": [_arg("#0", "7", True), _arg("#1", "128", True)],
        "shop.tasks.index_order": [_arg("#0", "request.order", None)],
    }
    found = [s.model_copy(update={"arguments": arguments[s.job]}) for s in inventory.sites]
    return root, inventory.model_copy(update={"sites": found})


def _arg(name: str, source: str, serialisable: bool | None) -> Argument:
    return Argument(name=name, source=source, serialisable=serialisable)


def _after(root: Path, inventory: Inventory, **options: object) -> dict[str, str]:
    result = plan_apply(root, inventory, ApplyOptions(allow_dirty=True, **options))  # type: ignore[arg-type]
    return {change.path: change.after for change in result.changes}


def test_the_target_from_pyproject_writes_djangos_task_api(project: tuple[Path, Inventory]) -> None:
    root, inventory = project
    after = _after(root, inventory)
    assert after == {"shop/tasks.py": TASKS_AFTER, "shop/views.py": VIEWS_AFTER}


def test_a_site_whose_arguments_are_not_proven_json_is_skipped_with_the_reason(
    project: tuple[Path, Inventory],
) -> None:
    root, inventory = project
    result = plan_apply(root, inventory, ApplyOptions(allow_dirty=True))
    [why] = [o.reason for o in result.outcomes if o.site.job == "shop.tasks.index_order"]
    assert "Django's enqueue takes JSON only" in why and "request.order" in why
    assert 'target = "queue-runtime"' in why


def test_a_declared_key_keeps_the_job_on_queue_runtime(project: tuple[Path, Inventory]) -> None:
    root, inventory = project
    keys = {"shop.tasks.make_thumbnail": "thumb-{image_id}"}
    result = plan_apply(root, inventory, ApplyOptions(allow_dirty=True, keys=keys))
    assert not result.changes
    [why] = [o.reason for o in result.outcomes if o.site.job == "shop.tasks.make_thumbnail"]
    assert "no idempotency keys" in why


def test_another_pool_and_the_verdict_are_task_keywords(project: tuple[Path, Inventory]) -> None:
    root, inventory = project
    pools = {"shop.tasks.make_thumbnail": "transactional"}
    after = _after(root, inventory, pools=pools)
    assert (
        '@task(pool="transactional", idempotent=True)\ndef make_thumbnail('
        in after["shop/tasks.py"]
    )


def test_the_flag_wins_and_queue_runtime_stays_the_default(
    project: tuple[Path, Inventory],
) -> None:
    root, inventory = project
    after = _after(root, inventory, target=MigrationTarget.QUEUE_RUNTIME)
    assert "from queue_runtime import job" in after["shop/tasks.py"]
    assert (
        "make_thumbnail.options(inline=InlineShape.THREAD).enqueue(7, 128)"
        in after["shop/views.py"]
    )
