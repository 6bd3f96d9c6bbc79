"""A project's own ``to_thread``: a function that hands its callable parameter to an
executor through ``functools.partial(ctx.run, func, *args)`` is a spawn wrapper.

That is ``asyncio.to_thread``'s own body (CPython, ``Lib/asyncio/threads.py``: copy the
context, ``partial(ctx.run, func, *args, **kwargs)``, ``loop.run_in_executor(None, ...)``),
which projects copy to keep their context variables in the thread (found on the census:
dstack's ``run_async``, litestar's ``sync_to_thread``). The scan read the local as an
unknown callable, so every call of the wrapper, in FastAPI handlers among them, was lost.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

WORK = """import requests


def validate(key):
    requests.post("https://api.example.com/validate", json={"key": key})


def lookup(key):
    return requests.get("https://api.example.com/keys", params={"key": key}).json()
"""

VIEWS = """from fastapi import FastAPI

from app.util import run_async
from app.work import lookup, validate

app = FastAPI()


@app.post("/backends")
async def create(key: str):
    await run_async(validate, key)
    return {}


@app.get("/keys")
async def keys(key: str):
    await run_async(lookup, key=key)
    return {}
"""

WRAPPERS = {
    "partial in a local (asyncio.to_thread's body)": """import asyncio
import contextvars
import functools


async def run_async(func, *args, **kwargs):
    loop = asyncio.get_running_loop()
    ctx = contextvars.copy_context()
    func_call = functools.partial(ctx.run, func, *args, **kwargs)
    return await loop.run_in_executor(None, func_call)
""",
    "partial written in place": """import asyncio
import contextvars
from functools import partial


async def run_async(func, *args, **kwargs):
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        None, partial(contextvars.copy_context().run, func, *args, **kwargs)
    )
""",
    "lambda calling ctx.run": """import asyncio
import contextvars


async def run_async(func, *args, **kwargs):
    ctx = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(
        None, lambda: ctx.run(func, *args, **kwargs)
    )
""",
    "ctx.run handed with its arguments": """import asyncio
import contextvars


async def run_async(func, *args):
    ctx = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(None, ctx.run, func, *args)
""",
}


@pytest.mark.parametrize("shape", sorted(WRAPPERS))
def test_calls_of_a_context_copying_wrapper_name_their_jobs(
    scan_project: Scanner, shape: str
) -> None:
    util = WRAPPERS[shape]
    if shape == "ctx.run handed with its arguments":  # no keywords through Context.run
        views = VIEWS.replace("run_async(lookup, key=key)", "run_async(lookup, key)")
    else:
        views = VIEWS
    inventory = scan_project(
        {"app/__init__.py": "", "app/util.py": util, "app/work.py": WORK, "app/api.py": views}
    )
    sites = {(s.location.path, s.job, s.pattern) for s in inventory.sites}
    assert ("app/api.py", "app.work.validate", Pattern.RUN_IN_EXECUTOR) in sites
    assert ("app/api.py", "app.work.lookup", Pattern.RUN_IN_EXECUTOR) in sites
    # the wrapper's own inner site is replaced by its callers' sites
    assert not [s for s in inventory.sites if s.location.path == "app/util.py"]
    verdicts = {j.qualname: j.idempotency for j in inventory.jobs}
    assert verdicts["app.work.validate"] is Idempotency.NON_IDEMPOTENT
    assert verdicts["app.work.lookup"] is Idempotency.IDEMPOTENT


def test_a_local_bound_to_two_callables_stays_unknown(scan_project: Scanner) -> None:
    """The partial names the parameter on one path only: what runs is known at run time."""
    util = """import asyncio
import contextvars
import functools

from app.work import lookup


async def run_async(func, *args, fallback=False):
    ctx = contextvars.copy_context()
    func_call = functools.partial(ctx.run, func, *args)
    if fallback:
        func_call = functools.partial(ctx.run, lookup, *args)
    return await asyncio.get_running_loop().run_in_executor(None, func_call)
"""
    inventory = scan_project(
        {"app/__init__.py": "", "app/util.py": util, "app/work.py": WORK, "app/api.py": VIEWS}
    )
    assert not [s for s in inventory.sites if s.location.path == "app/api.py"]
    inner = [s for s in inventory.sites if s.location.path == "app/util.py"]
    assert [(s.pattern, s.job) for s in inner] == [(Pattern.RUN_IN_EXECUTOR, "unknown")]


def test_a_partial_of_something_else_is_no_wrapper(scan_project: Scanner) -> None:
    """``partial(ctx.run, HANDLERS[name])``: the callable is looked up, not handed in."""
    util = """import asyncio
import contextvars
import functools

HANDLERS = {}


async def run_async(func, *args):
    ctx = contextvars.copy_context()
    func_call = functools.partial(ctx.run, HANDLERS[func], *args)
    return await asyncio.get_running_loop().run_in_executor(None, func_call)
"""
    inventory = scan_project(
        {"app/__init__.py": "", "app/util.py": util, "app/work.py": WORK, "app/api.py": VIEWS}
    )
    assert not [s for s in inventory.sites if s.location.path == "app/api.py"]
