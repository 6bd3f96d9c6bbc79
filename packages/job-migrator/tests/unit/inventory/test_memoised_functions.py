"""``f.cache_clear()`` on a function decorated with ``functools.lru_cache`` is the memo's.

The functools docs: the decorated function "is instrumented with a cache_parameters()
function ... cache_info() ... cache_clear() for clearing or invalidating the cache". These
act on the process's own memo. Before, ``settings.cache_clear()`` was an unresolved call (no
source, no catalogue entry) and the job ``unknown``; the census has 127 such calls. A
project method that happens to be named ``cache_clear`` is read as written."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import functools
import threading

import requests


@functools.lru_cache(maxsize=32)
def settings(name):
    return {"name": name}


@functools.cache
def flags():
    return {}


class Catalog:
    @functools.lru_cache
    def entries(self):
        return []

    def reload(self):
        self.entries.cache_clear()
        return self.entries.cache_info()


class Remote:
    def cache_clear(self):
        requests.post("https://cdn.example.com/purge")


def refresh():
    settings.cache_clear()
    flags.cache_clear()
    return settings.cache_info().hits


def purge(remote: Remote):
    remote.cache_clear()


def view():
    threading.Thread(target=refresh).start()
    threading.Thread(target=Catalog().reload).start()
    threading.Thread(target=purge, args=(Remote(),)).start()
"""


def test_the_memo_methods_of_a_cached_function_are_in_process(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    for name in ("app.refresh", "app.Catalog.reload"):
        assert jobs[name].idempotency is Idempotency.IDEMPOTENT, jobs[name].evidence
        assert not any("unresolved" in e.message for e in jobs[name].evidence)


def test_a_project_method_named_cache_clear_is_read_as_written(scan_project: Scanner) -> None:
    purge = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.purge"]
    assert "requests.post" in {e.api for e in purge.effects}
    assert purge.idempotency is Idempotency.NON_IDEMPOTENT
