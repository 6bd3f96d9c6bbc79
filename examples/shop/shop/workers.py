"""The module-level thread pool request handlers hand work to.

Created at import and shared by every request, as in many real apps. Handlers
use ``workers.EXECUTOR`` (not ``from shop.workers import EXECUTOR``) because
``drain`` replaces it on shutdown.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="shop-worker")


def drain() -> None:
    """Wait for submitted work, stop the pool's threads; the next submit starts new ones."""
    global EXECUTOR
    EXECUTOR.shutdown(wait=True)
    EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="shop-worker")
