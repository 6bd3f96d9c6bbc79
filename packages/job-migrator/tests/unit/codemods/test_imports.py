"""The one import registration needs: added once, where decorators below can see it."""

from __future__ import annotations

import libcst as cst
import pytest

from codemods._edits.imports import (
    add_import,
    project_packages,
    remove_imports_made_unused,
    remove_unused_imports,
)
from codemods._types import Import


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("def f():\n    pass\n", "from queue_runtime import job\n\n\ndef f():\n    pass\n"),
        (
            '"""Doc."""\n\n\ndef f(): ...\n',
            '"""Doc."""\n\nfrom queue_runtime import job\n\n\ndef f(): ...\n',
        ),
        (
            "from __future__ import annotations\n\nimport os\n\nX = 1\n",
            "from __future__ import annotations\n\nimport os\n\nfrom queue_runtime import job\n\nX = 1\n",
        ),
        ("from queue_runtime import configure\n", "from queue_runtime import configure, job\n"),
        ("from queue_runtime import job as j, job\n", "from queue_runtime import job as j, job\n"),
        # never after code: a decorator above a late import would not see the name
        (
            "import os\n\n@dec\ndef f(): ...\n\nimport late\n",
            "import os\n\nfrom queue_runtime import job\n\n@dec\ndef f(): ...\n\nimport late\n",
        ),
    ],
)
def test_add_import(before: str, after: str) -> None:
    assert add_import(cst.parse_module(before), "queue_runtime", "job").code == after


def test_plain_import_once() -> None:
    module = cst.parse_module("import queue_runtime\n\nx = 1\n")

    assert add_import(module, "queue_runtime", None).code == "import queue_runtime\n\nx = 1\n"


APP = frozenset({"app"})


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # in the third-party section, sorted: straight imports first, then from-imports by module
        (
            "import os\n\nimport httpx\nfrom PIL import Image\nfrom redis import Redis\n\n"
            "from app import db\n\nX = 1\n",
            "import os\n\nimport httpx\nfrom PIL import Image\nfrom queue_runtime import job\n"
            "from redis import Redis\n\nfrom app import db\n\nX = 1\n",
        ),
        # last of the third-party section, before the project's imports
        (
            "import httpx\nfrom fastapi import FastAPI\n\nfrom app import db\nfrom .x import y\n",
            "import httpx\nfrom fastapi import FastAPI\nfrom queue_runtime import job\n\n"
            "from app import db\nfrom .x import y\n",
        ),
        # first of the third-party section: it takes over the section's blank line
        (
            "import os\n\nfrom redis import Redis\n\nX = 1\n",
            "import os\n\nfrom queue_runtime import job\nfrom redis import Redis\n\nX = 1\n",
        ),
        # no third-party section: one of its own between the standard library and the project
        (
            "import json\nfrom threading import Thread\n\nfrom ..db import connect\n\nX = 1\n",
            "import json\nfrom threading import Thread\n\nfrom queue_runtime import job\n\n"
            "from ..db import connect\n\nX = 1\n",
        ),
        (
            "import os\nfrom app import db\n",
            "import os\n\nfrom queue_runtime import job\n\nfrom app import db\n",
        ),
        # only project imports: a section of its own above them
        (
            '"""Doc."""\n\n# ours\nfrom app import db\n\nX = 1\n',
            '"""Doc."""\n\n# ours\nfrom queue_runtime import job\n\nfrom app import db\n\nX = 1\n',
        ),
        # code stuck to the imports: set off by what isort leaves (two lines before a class)
        (
            "from __future__ import annotations\nclass A: ...\n",
            "from __future__ import annotations\n\nfrom queue_runtime import job\n\n\nclass A: ...\n",
        ),
    ],
)
def test_the_import_goes_where_isort_puts_it(before: str, after: str) -> None:
    assert add_import(cst.parse_module(before), "queue_runtime", "job", APP).code == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "from queue_runtime import configure, migrate\n",
            "from queue_runtime import configure, job, migrate\n",
        ),
        (
            "from queue_runtime import Settings, get_job\n",
            "from queue_runtime import Settings, get_job, job\n",
        ),
        (
            "from queue_runtime import migrate, configure\n",
            "from queue_runtime import migrate, configure, job\n",
        ),
        (
            "from queue_runtime import (\n    configure,\n    migrate,\n)\n",
            "from queue_runtime import (\n    configure,\n    job,\n    migrate,\n)\n",
        ),
    ],
)
def test_a_name_joins_an_import_from_the_package_in_its_sorted_place(
    before: str, after: str
) -> None:
    assert add_import(cst.parse_module(before), "queue_runtime", "job").code == after


def test_project_packages() -> None:
    assert project_packages(
        ["shop/images.py", "app.py", "src/pkg/mod.py", "tests/test_x.py"], ["shop.a.f", "other.g"]
    ) == {"shop", "app", "pkg", "tests", "other"}


def test_remove_unused_imports_drops_only_names_nothing_uses() -> None:
    module = cst.parse_module("from fastapi import BackgroundTasks, FastAPI\n\napp = FastAPI()\n")
    unused = [Import("fastapi", "BackgroundTasks"), Import("fastapi", "FastAPI")]

    assert remove_unused_imports(module, unused).code == (
        "from fastapi import FastAPI\n\napp = FastAPI()\n"
    )


@pytest.mark.parametrize(
    ("original", "rewritten", "cleaned"),
    [
        # the file's first import goes: the file does not start with a blank line
        (
            "import threading\n\nfrom shop.jobs import resize\n\nthreading.Thread(target=resize).start()\n",
            "import threading\n\nfrom shop.jobs import resize\n\nresize.enqueue()\n",
            "from shop.jobs import resize\n\nresize.enqueue()\n",
        ),
        # a comment above it stays, and so does the comment of the next line
        (
            "# licence\nimport threading\n\n# jobs\nimport shop\n\nthreading.Thread(target=shop.f).start()\n",
            "# licence\nimport threading\n\n# jobs\nimport shop\n\nshop.f.enqueue()\n",
            "# licence\n# jobs\nimport shop\n\nshop.f.enqueue()\n",
        ),
        # further down, the section break stays
        (
            "import os\nimport threading\n\nimport shop\n\nX = os.sep\nthreading.Thread(target=shop.f).start()\n",
            "import os\nimport threading\n\nimport shop\n\nX = os.sep\nshop.f.enqueue()\n",
            "import os\n\nimport shop\n\nX = os.sep\nshop.f.enqueue()\n",
        ),
    ],
)
def test_a_dropped_first_import_leaves_no_blank_line_at_the_top(
    original: str, rewritten: str, cleaned: str
) -> None:
    found = remove_imports_made_unused(cst.parse_module(original), cst.parse_module(rewritten))

    assert found.code == cleaned
