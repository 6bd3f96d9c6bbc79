"""The benchmarks' own tests: their logic is fast, their real runs (``*_e2e.py``) are the
``bench`` suite, left out of the default run (``tests.suites``)."""

from pathlib import Path

import pytest

from tests import suites


def pytest_configure(config: pytest.Config) -> None:
    suites.register(config, Path(__file__).parent, {"*_e2e.py": "bench"})
