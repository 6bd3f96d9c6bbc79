"""The one import registration needs: added once, where decorators below can see it."""

from __future__ import annotations

import libcst as cst
import pytest

from codemods._imports import add_import


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("def f():\n    pass\n", "from queue_runtime import job\n\ndef f():\n    pass\n"),
        (
            '"""Doc."""\n\n\ndef f(): ...\n',
            '"""Doc."""\n\nfrom queue_runtime import job\n\n\ndef f(): ...\n',
        ),
        (
            "from __future__ import annotations\n\nimport os\n\nX = 1\n",
            "from __future__ import annotations\n\nimport os\nfrom queue_runtime import job\n\nX = 1\n",
        ),
        ("from queue_runtime import configure\n", "from queue_runtime import configure, job\n"),
        ("from queue_runtime import job as j, job\n", "from queue_runtime import job as j, job\n"),
        # never after code: a decorator above a late import would not see the name
        (
            "import os\n\n@dec\ndef f(): ...\n\nimport late\n",
            "import os\nfrom queue_runtime import job\n\n@dec\ndef f(): ...\n\nimport late\n",
        ),
    ],
)
def test_add_import(before: str, after: str) -> None:
    assert add_import(cst.parse_module(before), "queue_runtime", "job").code == after


def test_plain_import_once() -> None:
    module = cst.parse_module("import queue_runtime\n\nx = 1\n")

    assert add_import(module, "queue_runtime", None).code == "import queue_runtime\n\nx = 1\n"
