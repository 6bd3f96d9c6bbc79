"""SQLAlchemy's column operators by name, on a column whose type the scan cannot see.

``column = getattr(Model, field); select(Model).where(column.in_(ids))`` builds a statement:
``in_``, ``not_in``/``notin_``, ``is_``, ``is_not``/``isnot`` are ColumnOperators' own
spellings, so the catalogue names them (``[[pure]] call = "?.in_"``). When the project itself
defines a method of that name, a receiver of unknown type may be one of its objects: the
call stays undecided (the project's method is the evidence), never pure by the name alone.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts

JOBS = (
    "from sqlalchemy import select\n\n\n"
    "def active(Model, field, ids):\n"
    "    column = getattr(Model, field)\n"
    "    return select(Model).where(column.in_(ids), column.is_not(None), column.notin_([0]))\n\n\n"
    "def check_in_untyped(room, guest):\n"
    "    room.in_(guest)\n"
)
ROOM = (
    "import requests\n\n\n"
    "class Room:\n"
    "    def in_(self, guest):\n"
    "        requests.post('https://hotel.example.com/checkin', json={'g': guest})\n"
)
VIEWS = (
    "import threading\n\nfrom app import jobs\n\n\n"
    "def view(request):\n"
    "    threading.Thread(target=jobs.active, args=(1, 2, 3)).start()\n"
    "    threading.Thread(target=jobs.check_in_untyped, args=(1, 2)).start()\n"
)


def test_a_column_operator_builds_an_expression(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS)
    assert verdicts["active"] == Idempotency.IDEMPOTENT


def test_a_project_method_of_that_name_keeps_the_call_undecided(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, views=VIEWS, models=ROOM)
    assert verdicts["active"] == Idempotency.UNKNOWN
    assert verdicts["check_in_untyped"] == Idempotency.UNKNOWN
