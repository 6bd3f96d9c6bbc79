"""Django's low-level cache API, async twins included, and django-redis's additions.

Written from Django's "The low-level cache API" (set, get, add, get_or_set, get_many,
set_many, delete, delete_many, clear, touch, incr, decr, close, and an ``a``-prefixed async
twin of each) and django-redis's README (``delete_pattern``, ``expire``, ``persist``,
``keys``, ``ttl`` on the same ``cache`` object). Before, only the synchronous half of
Django's API was catalogued: ``await cache.aset(...)`` and nautobot's
``cache.delete_pattern(...)`` were unresolved and their jobs ``unknown``."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import asyncio
import threading

from django.core.cache import cache


def warm(key):
    cache.add(key, 1)
    cache.get_or_set(key + ":b", list)
    cache.touch(key, 30)
    cache.delete_pattern("report:*")
    cache.expire(key, 60)
    return cache.ttl(key), cache.keys("report:*")


async def awarm(key):
    await cache.aset(key, 1)
    await cache.adelete(key + ":old")
    return await cache.aget(key)


def count(key):
    cache.decr(key)


def view(request):
    threading.Thread(target=warm, args=("k",)).start()
    threading.Thread(target=count, args=("k",)).start()


async def aview(request):
    asyncio.create_task(awarm("k"))
"""


def test_the_whole_cache_api_is_known(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    warm = jobs["app.warm"]
    assert warm.idempotency is Idempotency.IDEMPOTENT, warm.evidence
    kinds = {e.api: e.kind for e in warm.effects}
    assert kinds["django.core.cache.cache.delete_pattern"] is EffectKind.CACHE_DELETE
    assert kinds["django.core.cache.cache.add"] is EffectKind.CACHE_SET
    awarm = jobs["app.awarm"]
    assert awarm.idempotency is Idempotency.IDEMPOTENT, awarm.evidence
    assert {"django.core.cache.cache.aset", "django.core.cache.cache.adelete"} <= {
        e.api for e in awarm.effects
    }


def test_decr_counts_like_incr(scan_project: Scanner) -> None:
    count = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.count"]
    assert count.idempotency is Idempotency.NON_IDEMPOTENT
    assert {e.kind for e in count.effects} == {EffectKind.CACHE_INCR}
