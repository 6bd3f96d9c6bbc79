"""``name = functools.partial(f, ...)`` at module level: calling ``name`` calls ``f``.

functools documents a partial object as one that, called, "behaves like func called with the
positional arguments args and keyword arguments keywords". ``utcnow = partial(datetime.now,
UTC)`` (homeassistant's clock, 29 census jobs) left every ``utcnow()`` a call of unknown
target. The wrapped callable is now what the name stands for, here and where it is imported:
a clock read, a POST, a project function whose body is read. What is not a callable named in
the source (a call's result, a ``partial`` that is not functools') stays a gap.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory
from tests.unit.inventory.conftest import Verdicts, thread_views

UTIL = (
    "import datetime as dt\n"
    "import functools\n"
    "from functools import partial\n\n"
    "import requests\n\n"
    "utcnow = partial(dt.datetime.now, dt.timezone.utc)\n"
    "post_hook = functools.partial(requests.post, 'https://hooks.example.com')\n\n\n"
    "def ping(url, timeout):\n"
    "    requests.get(url, timeout=timeout)\n\n\n"
    "def make():\n"
    "    return ping\n\n\n"
    "quick_ping = partial(ping, timeout=1)\n"
    "made = partial(make(), timeout=1)\n"
)
OTHER = (
    "def partial(*args):\n"
    "    return args[0]\n\n\n"
    "def ping(url):\n"
    "    raise NotImplementedError\n\n\n"
    "not_functools = partial(ping)\n"
)
JOBS = (
    "from app.other import not_functools\n"
    "from app.util import made, post_hook, quick_ping, utcnow\n\n\n"
    "def stamp(x):\n    return utcnow()\n\n\n"
    "def hook(x):\n    post_hook(json={'x': x})\n\n\n"
    "def pinger(x):\n    quick_ping(x)\n\n\n"
    "def made_later(x):\n    made(x)\n\n\n"
    "def shadowed(x):\n    not_functools(x)\n"
)
NAMES = ("stamp", "hook", "pinger", "made_later", "shadowed")
VIEWS = thread_views(NAMES, "(request.GET['a'],)")


def test_a_module_level_partial_is_the_callable_it_wraps(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(util=UTIL, other=OTHER, jobs=JOBS, views=VIEWS)
    assert verdicts["stamp"] == Idempotency.IDEMPOTENT  # a clock read
    assert verdicts["hook"] == Idempotency.NON_IDEMPOTENT  # an unkeyed POST
    assert verdicts["pinger"] == Idempotency.IDEMPOTENT  # ping's GET, read from its body


def test_what_is_not_a_named_callable_stays_a_gap(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(util=UTIL, other=OTHER, jobs=JOBS, views=VIEWS)
    assert verdicts["made_later"] == Idempotency.UNKNOWN
    assert verdicts["shadowed"] != Idempotency.IDEMPOTENT


def test_the_wrapped_effect_is_the_evidence(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    files = {"app/__init__.py": "", "app/util.py": UTIL, "app/other.py": OTHER}
    inventory = scan_project(files | {"app/jobs.py": JOBS, "app/views.py": VIEWS})
    hook = next(j for j in inventory.jobs if j.qualname == "app.jobs.hook")
    assert [(e.kind, e.api) for e in hook.effects] == [(EffectKind.HTTP_POST, "requests.post")]
