"""Summarise many files: serially for small sets, else over a process pool.

Workers return JSON bytes per file (see ``inventory._scan._files``), so the parent
receives one small pickle per chunk instead of an object graph. Small sets
stay in-process because starting workers costs more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from inventory._scan._files import Outcome, summarise, summarise_chunk
from inventory._scan._walk import SourceFile

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

SERIAL_BELOW = 40
CHUNKS_PER_WORKER = 4
MAX_CHUNK = 32

Progress = Callable[[int, int], None]


def worker_count(jobs: int | None, files: int) -> int:
    """Processes to use: ``jobs`` if given, else one per core; 1 means in-process."""
    if jobs is None:
        jobs = 1 if files < SERIAL_BELOW else os.cpu_count() or 1
    return max(1, min(jobs, files))


def chunked(files: list[SourceFile], workers: int) -> list[list[SourceFile]]:
    size = max(1, min(MAX_CHUNK, -(-len(files) // (workers * CHUNKS_PER_WORKER))))
    return [files[start : start + size] for start in range(0, len(files), size)]


def summarise_all(
    files: list[SourceFile], max_bytes: int, jobs: int | None, progress: Progress | None
) -> Iterator[Outcome]:
    """Outcomes as they arrive, so the caller parses them while workers still run."""
    workers = worker_count(jobs, len(files))
    if workers == 1:
        return _serial(files, max_bytes, progress)
    return _parallel(files, max_bytes, workers, progress)


def _serial(
    files: list[SourceFile], max_bytes: int, progress: Progress | None
) -> Iterator[Outcome]:
    for done, file in enumerate(files, start=1):
        yield summarise(file, max_bytes)
        if progress:
            progress(done, len(files))


def _context() -> BaseContext:
    """fork when this process runs no other thread: workers start at once with
    everything imported, and never re-import the caller's ``__main__``.
    Forking a threaded process can deadlock, so then forkserver, whose
    preload starts every worker with the extractor already imported."""
    import multiprocessing  # here: a warm scan never starts a pool
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["inventory._scan._files", "inventory._extract"])
    return context


def _parallel(
    files: list[SourceFile], max_bytes: int, workers: int, progress: Progress | None
) -> Iterator[Outcome]:
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    done: set[str] = set()
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            chunks = chunked(files, workers)
            futures = [pool.submit(summarise_chunk, chunk, max_bytes) for chunk in chunks]
            for future in as_completed(futures):
                for outcome in future.result():
                    done.add(outcome.rel)
                    yield outcome
                if progress:
                    progress(len(done), len(files))
    except BrokenProcessPool:
        # A worker died (killed, out of memory, or a caller's unguarded
        # __main__ that cannot be re-imported): finish the rest in-process.
        rest = [file for file in files if file.rel not in done]
        yield from _serial(rest, max_bytes, _shifted(progress, len(done), len(files)))


def _shifted(progress: Progress | None, done: int, total: int) -> Progress | None:
    if progress is None:
        return None
    return lambda finished, _: progress(done + finished, total)
