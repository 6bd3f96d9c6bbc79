"""Methods a library class inherits from mixins in modules nothing made the scan read, and
redis-py's commands judged by the command they send.

redis-py's ``Redis`` gets ``hdel`` from ``HashCommands``, a mixin in ``redis.commands.core``
re-exported by ``redis.commands``; its body is ``self.execute_command("HDEL", ...)``. A
pipeline is what ``Redis.pipeline()`` returns (annotated ``-> "Pipeline"``). The library
here is a small installed package of that shape (the real one is 14,000 lines), read from
a virtualenv the way the scan reads any installed library: never imported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import EffectKind, Idempotency, Inventory, Job, scan
from tests.unit.inventory.fake_venv import fake_venv, write_tree

LIBRARY = {
    "redis/__init__.py": "from redis.client import Redis\n",
    "redis/client.py": (
        "from redis.commands import CoreCommands\n\n\n"
        "class Redis(CoreCommands):\n"
        "    def pipeline(self, transaction=True) -> 'Pipeline':\n"
        "        return Pipeline()\n\n"
        "    def execute_command(self, *args):\n"
        "        return self.connection.send(*args)\n\n\n"
        "class Pipeline(Redis):\n"
        "    def execute(self):\n"
        "        return []\n"
    ),
    "redis/typing.py": (
        "from typing import Protocol\n\n\n"
        "class CommandsProtocol(Protocol):\n"
        "    def execute_command(self, *args): ...\n"
    ),
    "redis/commands/__init__.py": "from .core import CoreCommands\n",
    "redis/commands/core.py": (
        "from redis.typing import CommandsProtocol\n\n\n"
        "class HashCommands(CommandsProtocol):\n"
        "    def hdel(self, name, *keys):\n"
        "        return self.execute_command('HDEL', name, *keys)\n\n\n"
        "class BasicKeyCommands(CommandsProtocol):\n"
        "    def incr(self, name, amount=1):\n"
        "        return self.execute_command('INCRBY', name, amount)\n\n"
        "    def set(self, name, value):\n"
        "        return self.execute_command('SET', name, value)\n\n"
        "    def get(self, name):\n"
        "        return self.execute_command('GET', name)\n\n\n"
        "class CoreCommands(BasicKeyCommands, HashCommands):\n"
        "    pass\n"
    ),
    "redis-9.0.dist-info/top_level.txt": "redis\n",
    "redis-9.0.dist-info/METADATA": "Name: redis\nVersion: 9.0\n",
}

JOBS = (
    "import threading\n\nfrom redis.client import Redis\n\n\n"
    "def forget(r: Redis, task_id):\n    r.hdel('tasks', task_id)\n\n\n"
    "def forget_queued(r: Redis, task_id):\n"
    "    pipe = r.pipeline(transaction=False)\n"
    "    pipe.hdel('tasks', task_id)\n"
    "    pipe.set('seen', task_id)\n"
    "    pipe.execute()\n\n\n"
    "def count(r: Redis, task_id):\n    r.incr(task_id)\n\n\n"
    "def send(r: Redis, command, task_id):\n    r.execute_command(command, task_id)\n\n\n"
    "def view(request, r: Redis):\n"
    "    for job in (forget, forget_queued, count):\n"
    "        threading.Thread(target=job, args=(r, request.GET['t'])).start()\n"
)


def _inventory(tmp_path: Path, library: dict[str, str], files: dict[str, str]) -> Inventory:
    """Scan ``files`` (under ``app/``) with ``library`` installed in a virtualenv of its own."""
    python = fake_venv(tmp_path / "env", library)
    write_tree(tmp_path / "project", {"app/__init__.py": "", **files})
    return scan(tmp_path / "project", use_cache=False, jobs=1, python=str(python))


def _scanned(tmp_path: Path, library: dict[str, str], jobs: str, *names: str) -> list[Job]:
    """Scan ``app/jobs.py`` = ``jobs`` with ``library`` installed; the jobs named."""
    inventory = _inventory(tmp_path, library, {"app/jobs.py": jobs})
    found = [inventory.job(f"app.jobs.{name}") for name in names]
    assert all(j is not None for j in found), [j.qualname for j in inventory.jobs]
    return [j for j in found if j is not None]


def _jobs(tmp_path: Path, files: dict[str, str]) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = _inventory(tmp_path, LIBRARY, files)
    return {j.qualname: (j.idempotency, {e.kind for e in j.effects}) for j in inventory.jobs}


def _started(*jobs: str) -> str:
    spawns = "".join(f"    threading.Thread(target={j}, args=(r, 't')).start()\n" for j in jobs)
    return f"\n\ndef view(request, r: Redis):\n{spawns}"


def test_a_command_a_mixin_of_an_unread_module_defines_is_judged_by_the_command(
    tmp_path: Path,
) -> None:
    jobs = _jobs(tmp_path, {"app/jobs.py": JOBS.split("\n\n\ndef view")[0] + _started("forget")})
    assert jobs["app.jobs.forget"] == (Idempotency.IDEMPOTENT, {EffectKind.CACHE_DELETE})


def test_a_pipeline_s_queued_commands_are_the_client_s_commands(tmp_path: Path) -> None:
    jobs = _jobs(
        tmp_path, {"app/jobs.py": JOBS.split("\n\n\ndef view")[0] + _started("forget_queued")}
    )
    assert jobs["app.jobs.forget_queued"] == (
        Idempotency.IDEMPOTENT,
        {EffectKind.CACHE_DELETE, EffectKind.CACHE_SET},
    )


def test_a_command_that_grows_on_repeat_is_not_idempotent(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path, {"app/jobs.py": JOBS.split("\n\n\ndef view")[0] + _started("count")})
    assert jobs["app.jobs.count"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.CACHE_INCR})


def test_a_command_named_by_a_variable_stays_unknown(tmp_path: Path) -> None:
    source = JOBS.split("\n\n\ndef view")[0]
    spawn = "\n\ndef view(request, r: Redis):\n"
    spawn += "    threading.Thread(target=send, args=(r, request.GET['c'], 't')).start()\n"
    jobs = _jobs(tmp_path, {"app/jobs.py": source + spawn})
    assert jobs["app.jobs.send"][0] == Idempotency.UNKNOWN


@pytest.mark.parametrize("read_first", [False, True])
def test_what_another_job_made_the_scan_read_first_changes_nothing(
    tmp_path: Path, read_first: bool
) -> None:
    """The pipeline's module (``redis.client``) read by an earlier job, or only when the
    pipeline's command is met: the verdict is the same."""
    order = ("forget", "forget_queued") if read_first else ("forget_queued",)
    jobs = _jobs(tmp_path, {"app/jobs.py": JOBS.split("\n\n\ndef view")[0] + _started(*order)})
    assert jobs["app.jobs.forget_queued"][0] == Idempotency.IDEMPOTENT


# pydantic 2's shape: ``BaseModel`` lives in ``pydantic.main``; ``pydantic/__init__.py``
# names it only through ``if TYPE_CHECKING: from .main import *`` and a lazy ``__getattr__``.
PYDANTIC = {
    "pydantic/__init__.py": (
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n    from .main import *\n\n"
        "_dynamic_imports = {'BaseModel': (__spec__.parent, '.main')}\n\n\n"
        "def __getattr__(name):\n"
        "    package, module = _dynamic_imports[name]\n"
        "    return getattr(__import__(package + module), name)\n"
    ),
    "pydantic/main.py": (
        "from typing import Self\n\n\n"
        "class BaseModel:\n"
        "    @classmethod\n"
        "    def model_validate(cls, obj) -> Self:\n"
        "        return cls.__pydantic_validator__.validate_python(obj)\n\n"
        "    def model_dump(self):\n"
        "        return self.__pydantic_serializer__.to_python(self)\n"
    ),
    "pydantic-2.99.dist-info/top_level.txt": "pydantic\n",
    "pydantic-2.99.dist-info/METADATA": "Name: pydantic\nVersion: 2.99\n",
}


def test_a_model_validated_from_data_is_the_project_s_model_and_its_api_a_leaf(
    tmp_path: Path,
) -> None:
    """``Invoice.model_validate(data).charge()``: pydantic's ``model_validate`` (``-> Self``,
    found through the star import only a type checker follows) gives an Invoice, whose
    ``charge`` runs; pydantic's own ``model_dump`` is explained by the catalogue, not read."""
    bill, show = _scanned(
        tmp_path,
        PYDANTIC,
        "import threading\n\nimport stripe\nfrom pydantic import BaseModel\n\n\n"
        "class Invoice(BaseModel):\n"
        "    def charge(self):\n"
        "        stripe.Charge.create(amount=100, currency='eur')\n\n\n"
        "class Note(BaseModel):\n"
        "    def render(self):\n"
        "        return str(self.model_dump())\n\n\n"
        "def bill(data):\n    Invoice.model_validate(data).charge()\n\n\n"
        "def show(data):\n    Note.model_validate(data).render()\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=bill, args=(request.POST,)).start()\n"
        "    threading.Thread(target=show, args=(request.POST,)).start()\n",
        "bill",
        "show",
    )
    assert bill.idempotency == Idempotency.UNSAFE, [e.message for e in bill.evidence]
    assert show.idempotency == Idempotency.IDEMPOTENT, [e.message for e in show.evidence]


HTTPX = {
    "httpx/__init__.py": "from ._client import *\nfrom ._models import *\n",
    "httpx/_models.py": (
        "__all__ = ['Headers']\n\n\n"
        "class Headers:\n"
        "    def __init__(self, raw):\n        self._raw = dict(raw)\n\n"
        "    def get(self, key, default=None):\n        return self._raw.get(key, default)\n"
    ),
    "httpx/_client.py": (
        "__all__ = ['AsyncClient']\n\n\n"
        "class AsyncClient:\n"
        "    async def get(self, url):\n        return await self.send(url)\n\n"
        "    async def send(self, request):\n        return request\n"
    ),
    "httpx-0.99.dist-info/top_level.txt": "httpx\n",
    "httpx-0.99.dist-info/METADATA": "Name: httpx\nVersion: 0.99\n",
}


def test_a_library_s_dict_like_get_is_no_request(tmp_path: Path) -> None:
    """Once httpx's source is read (its ``__init__`` star-imports every class), the
    catalogue's HTTP verbs match its client classes only: ``Headers.get`` is a lookup,
    ``AsyncClient.get`` a request."""
    lookup, fetch = _scanned(
        tmp_path,
        HTTPX,
        "import asyncio\n\nimport httpx\n\n\n"
        "async def lookup(raw):\n    return httpx.Headers(raw).get('etag')\n\n\n"
        "async def fetch(url):\n    await httpx.AsyncClient().get(url)\n\n\n"
        "async def view(request):\n"
        "    asyncio.create_task(lookup(request.headers))\n"
        "    asyncio.create_task(fetch(request.url))\n",
        "lookup",
        "fetch",
    )
    assert lookup.idempotency == Idempotency.IDEMPOTENT, [e.message for e in lookup.evidence]
    assert not lookup.effects
    assert {e.kind for e in fetch.effects} == {EffectKind.HTTP_GET}
