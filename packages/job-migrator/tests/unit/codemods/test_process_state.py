"""A job that changes state its process holds in memory stays in-process unless named.

Found by trying to break ``apply``: ``remember(key, value)`` doing ``CACHE[key] = value`` on a
module-level dict was called idempotent (nothing in it repeats) and moved, so the worker
filled its own ``CACHE`` and the web process never saw the value. open-webui's
``cleanup_task`` (``tasks.pop(task_id)`` on the module's task table) is the same shape. The
scan records each write to a module-level container or global as a ``process_state``
effect; apply refuses the job, naming the write, unless the job is named with ``--job``.
A memo (filled where it is read), a local that shadows the module's name, a nested
function's write and a parameter's container are not the job's process state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import ApplyOptions, Status, plan_apply
from inventory import scan
from inventory._extract import extract_source
from inventory.models import EffectKind, Idempotency
from inventory.summary import FactKind
from tests.unit.inventory.fake_venv import fake_venv, write_tree

STATE = """import collections
import os
import threading

from django.http import HttpResponse

CACHE = {}
TASKS: dict[str, object] = {}
SEEN = collections.deque(maxlen=100)
READY = False
_client = None


def remember(key, value):
    CACHE[key] = value


def forget(task_id):
    TASKS.pop(task_id, None)


def evict(key):
    del CACHE[key]


def mark_ready():
    global READY
    READY = True


def configure(level):
    os.environ["LOG_LEVEL"] = level


def note(item):
    SEEN.append(item)


def lookup(key):
    if key not in CACHE:
        CACHE[key] = key.upper()
    return CACHE[key]


def connect():
    global _client
    if _client is None:
        _client = object()
    return _client


def shadowed(key, value):
    CACHE = {}
    CACHE[key] = value
    return CACHE


def given(store, key, value):
    store[key] = value


def outer(key):
    def inner():
        CACHE[key] = 1

    return inner
"""

VIEWS = """import threading

from django.http import HttpResponse

from app.state import (
    configure, evict, forget, given, lookup, mark_ready, note, remember, shadowed,
)


def view(request):
    key = request.GET["k"]
    threading.Thread(target=remember, args=(key, "v")).start()
    threading.Thread(target=forget, args=(key,)).start()
    threading.Thread(target=evict, args=(key,)).start()
    threading.Thread(target=mark_ready).start()
    threading.Thread(target=configure, args=("debug",)).start()
    threading.Thread(target=note, args=(key,)).start()
    threading.Thread(target=lookup, args=(key,)).start()
    threading.Thread(target=shadowed, args=(key, "v")).start()
    threading.Thread(target=given, args=({}, key, "v")).start()
    return HttpResponse("ok")
"""

CHANGES = {
    "remember": ["app.state.CACHE"],
    "forget": ["app.state.TASKS"],
    "evict": ["app.state.CACHE"],
    "mark_ready": ["app.state.READY"],
    "configure": ["os.environ"],
    "note": ["app.state.SEEN"],
}


def test_writes_to_module_state_are_facts_and_nothing_else_is() -> None:
    summary = extract_source(STATE, "app/state.py", "app.state")
    written = {
        f.qualname.rsplit(".", 1)[-1]: [
            x.target for x in f.facts if x.kind is FactKind.MODULE_STATE
        ]
        for f in summary.functions
    }
    # ``inner``'s write is its own, not ``outer``'s (a nested function runs when called).
    assert {name: targets for name, targets in written.items() if targets} == {
        **CHANGES,
        "inner": ["app.state.CACHE"],
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("state")
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "state.py").write_text(STATE)
    (root / "app" / "views.py").write_text(VIEWS)
    return root


def test_the_effect_names_the_state_and_leaves_the_verdict(project: Path) -> None:
    inventory = scan(project, use_cache=False, write=False)
    jobs = {j.qualname.rsplit(".", 1)[-1]: j for j in inventory.jobs}
    changes = {
        name: [e.api for e in job.effects if e.kind is EffectKind.PROCESS_STATE]
        for name, job in jobs.items()
    }
    assert {n: c for n, c in changes.items() if c} == CHANGES
    # Not a retry risk: setting a value again converges.
    assert jobs["remember"].idempotency is Idempotency.IDEMPOTENT
    assert any(
        "the worker's copy" in e.message or "its own copy" in e.message
        for e in jobs["remember"].evidence
    )


def test_apply_keeps_jobs_changing_process_state_unless_named(project: Path) -> None:
    inventory = scan(project, use_cache=False, write=False)
    outcomes = {
        o.site.job.rsplit(".", 1)[-1]: o
        for o in plan_apply(project, inventory, scanner=None).outcomes
    }
    refused = outcomes["remember"]
    assert refused.status is Status.SKIPPED
    assert refused.reason.startswith(
        "the job changes state this process holds in memory (`app.state.CACHE` at app/state.py:15)"
    )
    assert "--job app.state.remember" in refused.reason
    mark = outcomes["mark_ready"]
    assert mark.status is Status.SKIPPED and "`app.state.READY`" in mark.reason
    # A memo, a shadowing local and a parameter's container are no process state: they move.
    for name in ("lookup", "shadowed", "given"):
        assert "holds in memory" not in outcomes[name].reason, name
    assert outcomes["lookup"].status is Status.REWRITTEN

    named = plan_apply(project, inventory, ApplyOptions(jobs=("app.state.remember",)), scanner=None)
    moved = {o.site.job: o.status for o in named.outcomes}
    assert moved["app.state.remember"] is Status.REWRITTEN
    assert any('.enqueue(key, "v")' in c.after for c in named.changes)


LIBRARY = """import functools
import importlib
import threading

from django.contrib.contenttypes.models import ContentType
from django.contrib.sites.models import Site
from django.urls import clear_url_caches

import app.urls


@functools.lru_cache
def flags():
    return {}


def refresh_flags():
    flags.cache_clear()


def reload_urls():
    importlib.reload(app.urls)
    clear_url_caches()


def forget_site():
    Site.objects.clear_cache()


def forget_types():
    ContentType.objects.clear_cache()


def read_flags():
    return flags.cache_info()


def view(request):
    threading.Thread(target=refresh_flags).start()
    threading.Thread(target=reload_urls).start()
    threading.Thread(target=forget_site).start()
    threading.Thread(target=forget_types).start()
    threading.Thread(target=read_flags).start()
"""


def test_library_calls_that_change_this_process_are_process_state(tmp_path: Path) -> None:
    """The documented ones: an lru_cache's ``cache_clear``, ``importlib.reload``, Django's
    ``clear_url_caches`` and the content-type and site caches' ``clear_cache``. Reading a
    memo's statistics changes nothing."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "urls.py").write_text("urlpatterns = []\n")
    (tmp_path / "app" / "jobs.py").write_text(LIBRARY)
    inventory = scan(tmp_path, use_cache=False, write=False)
    changes = {
        j.qualname.rsplit(".", 1)[-1]: sorted(
            e.api for e in j.effects if e.kind is EffectKind.PROCESS_STATE
        )
        for j in inventory.jobs
    }
    assert changes == {
        "refresh_flags": ["functools._lru_cache_wrapper.cache_clear"],
        "reload_urls": ["django.urls.clear_url_caches", "importlib.reload"],
        "forget_site": ["django.contrib.sites.models.Site.objects.clear_cache"],
        "forget_types": ["django.contrib.contenttypes.models.ContentType.objects.clear_cache"],
        "read_flags": [],
    }
    assert {j.idempotency for j in inventory.jobs} == {Idempotency.IDEMPOTENT}


def test_a_librarys_own_module_state_is_not_the_jobs(tmp_path: Path) -> None:
    """Read from an installed library, a counter it bumps or a registry it loads lazily
    (SQLAlchemy's ``_creation_order``, Django's ``_serializers``) is its implementation, not
    state the job keeps: found on the census (tendenci, timesketch, lightrag), where it
    would have held back every job saving a model."""
    library = {
        "reglib/__init__.py": "",
        "reglib/core.py": (
            "_registry = None\n"
            "_counter = 0\n\n\n"
            "def _load():\n"
            "    global _registry\n"
            "    _registry = {'json': object()}\n\n\n"
            "def export(value):\n"
            "    global _counter\n"
            "    _counter += 1\n"
            "    _load()\n"
            "    return str(value)\n"
        ),
    }
    python = fake_venv(tmp_path / "env", library)
    write_tree(
        tmp_path / "project",
        {
            "app/__init__.py": "",
            "app/jobs.py": (
                "import threading\n\n"
                "import requests\n"
                "from reglib.core import export\n\n\n"
                "def publish(value):\n"
                "    requests.put('https://reports.example.com/1', data=export(value))\n\n\n"
                "def view(request):\n"
                "    threading.Thread(target=publish, args=(1,)).start()\n"
            ),
        },
    )
    inventory = scan(tmp_path / "project", use_cache=False, jobs=1, python=str(python))
    job = inventory.job("app.jobs.publish")
    assert job is not None
    assert not [e for e in job.effects if e.kind is EffectKind.PROCESS_STATE], job.effects
    assert job.idempotency is Idempotency.IDEMPOTENT, job.evidence
