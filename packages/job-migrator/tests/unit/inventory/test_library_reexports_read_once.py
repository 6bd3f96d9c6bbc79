"""A library name re-exported by a package the scan has already read still resolves.

``class Invoice(shapes_lib.Record)`` overrides ``create`` (to charge a card), which the library's ``Record``
defines (in ``shapes_lib.impl``, re-exported by ``shapes_lib/__init__.py``). By the by-name
rule, an untyped ``x.create()`` is then not guessed to be ``Invoice.create``: the name is
the library's. Whether the scan saw that must not depend on whether another call had
already made it read ``shapes_lib/__init__.py`` (it once did: a re-export through a
module already read stopped the lookup, and the guess was made).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import EffectKind, Idempotency, scan
from tests.unit.inventory.fake_venv import fake_venv, write_tree

LIBRARY = {
    "shapes_lib/__init__.py": "from shapes_lib.impl import Record, helper\n",
    "shapes_lib/impl.py": (
        "class Record:\n    def create(self):\n        return self\n\n\n"
        "def helper():\n    return 1\n"
    ),
    "shapes_lib-1.0.dist-info/top_level.txt": "shapes_lib\n",
    "shapes_lib-1.0.dist-info/METADATA": "Name: shapes_lib\nVersion: 1.0\n",
}
MODELS = (
    "import stripe\n\nimport shapes_lib\n\n\n"
    "class Invoice(shapes_lib.Record):\n"
    "    def create(self):\n"
    "        stripe.Charge.create(amount=100, currency='eur')\n"
)


def _jobs(tmp_path: Path, read_first: bool) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    python = fake_venv(tmp_path / "env", LIBRARY)
    first = "def first():\n    shapes_lib.helper()\n\n\n" if read_first else ""
    start = "    threading.Thread(target=first).start()\n" if read_first else ""
    write_tree(
        tmp_path / "project",
        {
            "app/__init__.py": "",
            "app/models.py": MODELS,
            "app/jobs.py": (
                "import threading\n\nimport shapes_lib\n\n\n"
                f"{first}"
                "def second(thing):\n    make(thing)\n\n\n"
                "def make(thing):\n    thing.create()\n\n\n"
                "def view(request):\n"
                f"{start}"
                "    threading.Thread(target=second, args=(request.GET,)).start()\n"
            ),
        },
    )
    inventory = scan(tmp_path / "project", use_cache=False, jobs=1, python=str(python))
    return {j.qualname: (j.idempotency, {e.kind for e in j.effects}) for j in inventory.jobs}


@pytest.mark.parametrize("read_first", [False, True])
def test_a_method_a_library_base_defines_is_not_guessed_whatever_was_read_before(
    tmp_path: Path, read_first: bool
) -> None:
    # a guess would bring the override's charge in (money stays an effect behind a guess)
    verdict, effects = _jobs(tmp_path, read_first)["app.jobs.second"]
    assert EffectKind.PAYMENT not in effects
    assert verdict is Idempotency.UNKNOWN  # still a gap: the receiver may be anything
