"""Summarise many files: serially for small sets, else over a process pool.

Workers return JSON bytes per file (see ``inventory._files``), so the parent
receives one small pickle per chunk instead of an object graph. Small sets
stay in-process because starting workers costs more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from inventory._files import Outcome, summarise, summarise_chunk
from inventory._walk import SourceFile

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
) -> list[Outcome]:
    workers = worker_count(jobs, len(files))
    if workers == 1:
        return _serial(files, max_bytes, progress)
    return _parallel(files, max_bytes, workers, progress)


def _serial(files: list[SourceFile], max_bytes: int, progress: Progress | None) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for file in files:
        outcomes.append(summarise(file, max_bytes))
        if progress:
            progress(len(outcomes), len(files))
    return outcomes


def _context() -> BaseContext:
    # forkserver, not fork: the caller may run threads (a progress bar, a web
    # server) and forking a threaded process can deadlock. The preload makes
    # every worker start with the extractor already imported. Imported here:
    # a warm scan never starts a pool and should not pay for the import.
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["inventory._files", "inventory._extract"])
    return context


def _parallel(
    files: list[SourceFile], max_bytes: int, workers: int, progress: Progress | None
) -> list[Outcome]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    outcomes: list[Outcome] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        futures = [
            pool.submit(summarise_chunk, chunk, max_bytes) for chunk in chunked(files, workers)
        ]
        for future in as_completed(futures):
            outcomes.extend(future.result())
            if progress:
                progress(len(outcomes), len(files))
    return outcomes
