"""Interpreter settings for the scan's bulk work, changed while it runs, restored after.

Two phases build large graphs of objects: parsing and walking a module (hundreds of
thousands of AST nodes), and loading and classifying a project's summaries (pydantic
models, traces, indexes: on Django's 827 modules, 11 MB of summaries). Neither makes
reference cycles worth collecting: reference counting frees what they drop. But the
cyclic collector runs every few hundred allocations and, as the heap grows, walks all of
it again and again: measured on Django, a scan after one edited file took 3.7 s with the
collector on and 2.0 s with it paused, at the same peak memory (182 MB).

The recursion limit is raised for the walk, which recurses once or twice per AST level:
valid code nests deeper than the default limit allows (generated expressions). Python-to-
Python calls do not use the C stack since 3.11, so a higher limit is safe.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["bulk_work"]

_RECURSION_LIMIT = 20_000


class _Pause:
    """Process-wide settings changed while any bulk work runs, restored by the last one out.

    Counted, so that threads (an extraction beside a classification, nested phases) never
    restore a setting under one another's feet.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._gc_was_enabled = False
        self._recursion_limit = 0

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._active == 0:
                self._enter()
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    self._exit()

    def _enter(self) -> None:
        self._gc_was_enabled = gc.isenabled()
        gc.disable()
        self._recursion_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self._recursion_limit, _RECURSION_LIMIT))

    def _exit(self) -> None:
        sys.setrecursionlimit(self._recursion_limit)
        if self._gc_was_enabled:
            gc.enable()


bulk_work = _Pause()
