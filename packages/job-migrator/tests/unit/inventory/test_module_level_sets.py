"""A set kept at module level is a set, annotated or not.

``SEEN: set[str] = set()`` was typed from its annotation, so ``SEEN.add(x)`` in a job was
explained; the same line without the annotation left ``SEEN.add`` a call of unknown
target, and the job ``unknown`` (the census' widest single gap: homeassistant's
``_REPORTED_INTEGRATIONS.add``, 45 jobs). A set's methods converge and touch nothing
outside the process, so the value made (``set()``, ``frozenset(...)``, a set literal) types
the name wherever it is read, imports included. A module-level list is not typed so: what
is appended to it ships later (a collector, a repeating effect), and a parameter or local
of the same name is not the module's set.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory
from tests.unit.inventory.conftest import Verdicts, thread_views

STATE = "SEEN = set()\nKNOWN = {'a', 'b'}\nFROZEN = frozenset(['x'])\nBUFFER = []\n"
JOBS = (
    "from app.state import BUFFER, FROZEN, KNOWN, SEEN\n"
    "from app import state\n\n"
    "LOCAL_SEEN = set()\n\n\n"
    "def remember(name):\n"
    "    SEEN.add(name)\n"
    "    KNOWN.discard(name)\n"
    "    state.SEEN.update([name])\n\n\n"
    "def local_set(name):\n"
    "    LOCAL_SEEN.add(name)\n"
    "    return FROZEN.union({name})\n\n\n"
    "def buffered(event):\n"
    "    BUFFER.append(event)\n\n\n"
    "def shadowed(SEEN, name):\n"
    "    SEEN.add(name)\n\n\n"
    "def rebound(name):\n"
    "    SEEN = make_session()\n"
    "    SEEN.add(name)\n\n\n"
    "def make_session():\n"
    "    raise NotImplementedError\n"
)
NAMES = ("remember", "local_set", "buffered", "shadowed", "rebound")
VIEWS = thread_views(NAMES, "(request.GET['a'],)")


def test_a_module_level_set_is_typed_without_an_annotation(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(state=STATE, jobs=JOBS, views=VIEWS)
    assert verdicts["remember"] == Idempotency.IDEMPOTENT
    assert verdicts["local_set"] == Idempotency.IDEMPOTENT


def test_a_list_a_parameter_or_a_local_of_that_name_is_not_the_set(
    app_verdicts: Verdicts,
) -> None:
    verdicts = app_verdicts(state=STATE, jobs=JOBS, views=VIEWS)
    assert verdicts["buffered"] == Idempotency.NON_IDEMPOTENT  # a collector: it grows
    assert verdicts["shadowed"] == Idempotency.UNKNOWN
    assert verdicts["rebound"] == Idempotency.UNKNOWN


def test_the_buffer_is_a_repeating_effect(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    files = {"app/__init__.py": "", "app/state.py": STATE, "app/jobs.py": JOBS}
    inventory = scan_project(files | {"app/views.py": VIEWS})
    (job,) = [j for j in inventory.jobs if j.qualname == "app.jobs.buffered"]
    assert [e.kind for e in job.effects] == [EffectKind.CACHE_INCR]
