"""What a library call's result iterates, from the library's documentation: ``re.finditer``
and a pattern's ``finditer`` yield ``re.Match`` objects, ``concurrent.futures.as_completed``
the futures given, a ``Path``'s ``iterdir``/``glob``/``rglob`` paths. A loop variable over
them is typed, so its methods are the library's: a match's ``end()`` reads the match, a
path's ``unlink()`` deletes a file.

Adversaries: a project method named ``finditer`` and iterating an untyped receiver's
``glob`` stay undecided.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts, thread_views

JOBS = (
    "import re\n"
    "from concurrent.futures import ThreadPoolExecutor, as_completed\n"
    "from pathlib import Path\n\n"
    "from app.helpers import Finder\n\n"
    "MARKER = re.compile(r'<!-- (\\w+) -->')\n\n\n"
    "def markers(text):\n"
    "    ends = [match.end() for match in MARKER.finditer(text)]\n"
    "    for match in re.finditer(r'\\d+', text):\n"
    "        ends.append(match.start())\n"
    "    return ends\n\n\n"
    "def sizes(paths):\n"
    "    with ThreadPoolExecutor() as pool:\n"
    "        futures = [pool.submit(len, p) for p in paths]\n"
    "        return [future.result() for future in as_completed(futures)]\n\n\n"
    "def clear_cache(root):\n"
    "    for path in Path(root).glob('*.tmp'):\n"
    "        path.unlink(missing_ok=True)\n\n\n"
    "def project_finder(text):\n"
    "    for match in Finder().finditer(text):\n"
    "        match.end()\n\n\n"
    "def untyped(box):\n"
    "    for path in box.glob('*'):\n"
    "        path.unlink()\n"
)
HELPERS = "class Finder:\n    def finditer(self, text):\n        return text.items\n"
NAMES = ("markers", "sizes", "clear_cache", "project_finder", "untyped")


def test_loop_variables_over_library_iterators_are_typed(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, helpers=HELPERS, views=thread_views(NAMES))
    assert {name: verdicts[name] for name in NAMES} == {
        "markers": Idempotency.IDEMPOTENT,
        "sizes": Idempotency.IDEMPOTENT,
        "clear_cache": Idempotency.IDEMPOTENT,  # deleting a file twice: already gone
        "project_finder": Idempotency.UNKNOWN,
        "untyped": Idempotency.UNKNOWN,
    }
