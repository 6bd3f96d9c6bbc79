"""The fingerprint of a job's code: what changes it, what does not, and that it is stable."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from queue_runtime.gate import fingerprint

APP = {
    "__init__.py": "",
    "helpers.py": """
        RATE = 2

        def rate():
            return RATE

        def unrelated():
            return "never called by the job"

        class Ledger:
            def add(self, amount):
                return amount * rate()

        def recurse_a(n):
            return 0 if n == 0 else recurse_b(n - 1)

        def recurse_b(n):
            return recurse_a(n)
    """,
    "jobs.py": """
        import json

        from queue_runtime import job
        from queue_runtime.registry import Registry

        from {pkg} import helpers
        from {pkg}.helpers import Ledger, recurse_a

        @job(name="charge", registry=Registry())
        def charge(order: int) -> int:
            return Ledger().add(order) + helpers.rate() + recurse_a(2) + len(json.dumps(order))
    """,
}


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Write the app as package ``name`` (with replaced snippets) and import its job."""
    created: list[str] = []

    def make(name: str, **replace: str) -> Any:
        folder = tmp_path / name
        folder.mkdir()
        for file, text in APP.items():
            body = textwrap.dedent(text).replace("{pkg}", name)
            for old, new in replace.items():
                body = body.replace(old, new)
            (folder / file).write_text(body)
        created.append(name)
        return importlib.import_module(f"{name}.jobs").charge

    sys.path.insert(0, str(tmp_path))
    try:
        yield make
    finally:
        sys.path.remove(str(tmp_path))
        for name in list(sys.modules):
            if any(name == c or name.startswith(c + ".") for c in created):
                del sys.modules[name]


def test_same_code_same_fingerprint_under_another_package_name(make_app: Any) -> None:
    assert fingerprint(make_app("fpa1")) == fingerprint(make_app("fpa2"))


def test_a_change_in_code_the_job_calls_changes_it(make_app: Any) -> None:
    base = fingerprint(make_app("fpb0"))
    assert fingerprint(make_app("fpb1", **{"return RATE": "return RATE + 1"})) != base
    assert fingerprint(make_app("fpb2", **{"amount * rate()": "amount * 3"})) != base  # a method
    assert fingerprint(make_app("fpb3", **{"recurse_a(n)\n": "recurse_a(n - 0)\n"})) != base
    assert fingerprint(make_app("fpb4", **{"len(json": "1 + len(json"})) != base  # the job itself


def test_code_the_job_does_not_call_does_not_change_it(make_app: Any) -> None:
    base = fingerprint(make_app("fpc0"))
    assert fingerprint(make_app("fpc1", **{"never called": "still never called"})) == base


def test_the_job_function_and_its_registration_agree(make_app: Any) -> None:
    charge = make_app("fpd0")
    assert fingerprint(charge) == fingerprint(charge.fn)
    assert len(fingerprint(charge)) == 64


def test_stable_across_processes(make_app: Any, tmp_path: Path) -> None:
    here = fingerprint(make_app("fpe0"))
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from queue_runtime.gate import fingerprint; from fpe0.jobs import charge;"
        "print(fingerprint(charge))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            cwd=Path(__file__).resolve().parents[5],
        ).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert runs == {here}


def test_functions_without_source_still_fingerprint() -> None:
    namespace: dict[str, Any] = {}
    exec("def f(x):\n    return x + 1\n", namespace)  # a function with no file
    exec("def g(x):\n    return x + 2\n", namespace)
    assert fingerprint(namespace["f"]) != fingerprint(namespace["g"])


SHAPES = {
    "__init__.py": "",
    "models.py": """
        from dataclasses import dataclass, field

        @dataclass(frozen=True, slots=True)
        class Order:
            id: int
            lines: list[int] = field(default_factory=list)

        @dataclass
        class User:
            email: str

            @property
            def domain(self):
                return self.email.split("@")[1]

        @dataclass(order=True)
        class Receipt:
            order: Order
            user: User
    """,
    "jobs.py": """
        from {pkg}.models import Order, Receipt, User

        def _make_formatter(prefix):
            def fmt(text):
                return prefix + text
            return fmt

        FORMAT = _make_formatter("> ")
        PICK = lambda receipt: receipt.user.domain

        def send(order_id: int) -> str:
            receipt = Receipt(Order(order_id), User("a@b.c"))
            kind = "big" if order_id in {1, 2, 3, "x", "y"} else "small"
            return FORMAT(repr(receipt) + PICK(receipt) + kind)
    """,
}


def test_stable_under_every_hash_seed_with_dataclasses_closures_lambdas_properties(
    tmp_path: Path,
) -> None:
    """The dataclass-generated methods of several classes of one module share one name;
    which of them counted used to depend on set order, so on PYTHONHASHSEED."""
    folder = tmp_path / "fpshapes"
    folder.mkdir()
    for file, text in SHAPES.items():
        (folder / file).write_text(textwrap.dedent(text).replace("{pkg}", "fpshapes"))
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from queue_runtime.gate import fingerprint; from fpshapes.jobs import send;"
        "print(fingerprint(send))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout.strip()
        for seed in range(6)
    }
    assert len(runs) == 1 and len(runs.pop()) == 64


REACH = {
    "__init__.py": "",
    "clients.py": """
        class Client:
            def charge(self, amount):
                return amount * 2

        client = Client()
        PRICES = {"gold": 1}
        LIMIT = 10
    """,
    "money.py": """
        class Fee:
            def on(self, amount):
                return amount // 10
    """,
    "jobs.py": """
        from queue_runtime import job
        from queue_runtime.registry import Registry

        from {pkg} import clients
        from {pkg}.clients import PRICES, client
        from {pkg}.money import Fee

        RATE = 1
        SEEN = {}
        TIP = 5

        @job(name="charge", registry=Registry())
        def charge(order: int, tip=TIP, fee=Fee()) -> int:
            SEEN[order] = True
            total = client.charge(order) * RATE + PRICES["gold"] + tip + fee.on(order)
            return min(total, clients.LIMIT)
    """,
}


@pytest.fixture
def make_reach(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Write REACH as package ``name`` (with replaced snippets) and import its job."""
    created: list[str] = []

    def make(name: str, **replace: str) -> Any:
        folder = tmp_path / name
        folder.mkdir()
        for file, text in REACH.items():
            body = textwrap.dedent(text).replace("{pkg}", name)
            for old, new in replace.items():
                body = body.replace(old, new)
            (folder / file).write_text(body)
        assert all(any(old in text for text in REACH.values()) for old in replace)
        created.append(name)
        return importlib.import_module(f"{name}.jobs").charge

    sys.path.insert(0, str(tmp_path))
    try:
        yield make
    finally:
        sys.path.remove(str(tmp_path))
        for name in list(sys.modules):
            if any(name == c or name.startswith(c + ".") for c in created):
                del sys.modules[name]


@pytest.mark.parametrize(
    ("case", "old", "new"),
    [
        ("instance", "amount * 2", "amount * 3"),  # a method of a module-level instance's class
        ("constant", "RATE = 1", "RATE = 100"),  # a module constant the job reads
        ("imported", '{"gold": 1}', '{"gold": 2}'),  # a constant imported from another module
        ("attribute", "LIMIT = 10", "LIMIT = 20"),  # a constant read as module.attribute
        ("default", "TIP = 5", "TIP = 6"),  # a default argument's value, named by a constant
        ("defclass", "amount // 10", "amount // 5"),  # the class of an instance given as default
        ("built", "client = Client()", "client = Client() or None"),  # how the instance is built
    ],
)
def test_what_the_job_reaches_changes_it(make_reach: Any, case: str, old: str, new: str) -> None:
    base = fingerprint(make_reach(f"fpr_{case}_0"))
    assert fingerprint(make_reach(f"fpr_{case}_1", **{old: new})) != base


def test_what_a_module_value_holds_at_run_time_does_not_change_it(make_reach: Any) -> None:
    charge = make_reach("fprs0")
    before = fingerprint(charge)
    charge.fn(3)  # fills the module-level SEEN dict
    assert charge.fn.__globals__["SEEN"] == {3: True}
    assert fingerprint(charge) == before == fingerprint(make_reach("fprs1"))


def test_unread_module_values_do_not_change_it(make_reach: Any) -> None:
    base = fingerprint(make_reach("fpru0"))
    assert fingerprint(make_reach("fpru1", **{"LIMIT = 10": "LIMIT = 10\nOTHER = 3"})) == base


def test_module_values_fingerprint_the_same_under_every_hash_seed(
    make_reach: Any, tmp_path: Path
) -> None:
    here = fingerprint(make_reach("fprseed"))
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from queue_runtime.gate import fingerprint; from fprseed.jobs import charge;"
        "print(fingerprint(charge))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout.strip()
        for seed in ("0", "1", "2")
    }
    assert runs == {here}
