"""A project function typed to return a library class: what its callers call on the value.

``async def get_session() -> aiohttp.ClientSession`` in one module, then ``session = await
get_session(); await session.post(url)`` in another: the scan resolved the call written in
one expression (``get_client().post(...)``) but not through the local, so the POST was an
unresolved ``?.post`` and a handler reaching only it was no site at all. The value is of
the class the function declares (or builds in every return), as for a project class.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory
from inventory._extract import extract_source

Scanner = Callable[[dict[str, str]], Inventory]

POOL = """import aiohttp
import httpx

_session = None


async def get_session() -> aiohttp.ClientSession:
    global _session
    if _session is None:
        _session = aiohttp.ClientSession()
    return _session


def get_client() -> httpx.Client:
    return httpx.Client()


def untyped_client():
    return make_anything()


class Service:
    def client(self) -> httpx.Client:
        return httpx.Client()
"""

JOBS = """import threading

from app.pool import Service, get_client, get_session, untyped_client


async def post_async(x):
    session = await get_session()
    await session.post("https://a.example.com", json={"x": x})


def read_sync(x):
    client = get_client()
    return client.get(f"https://a.example.com/{x}")


def from_method(x):
    client = Service().client()
    client.delete(f"https://a.example.com/{x}")


def untyped(x):
    client = untyped_client()
    client.post("https://a.example.com", json={"x": x})


def view(request):
    threading.Thread(target=read_sync, args=(1,)).start()
    threading.Thread(target=from_method, args=(1,)).start()
    threading.Thread(target=untyped, args=(1,)).start()


async def aview(request):
    import asyncio

    asyncio.create_task(post_async(1))
"""


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = scan_project({"app/__init__.py": "", "app/pool.py": POOL, "app/jobs.py": JOBS})
    return {
        j.qualname.rsplit(".", 1)[-1]: (j.idempotency, {e.kind for e in j.effects})
        for j in inventory.jobs
    }


def test_a_library_client_a_project_function_returns_is_that_class(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    assert jobs["post_async"] == (Idempotency.NON_IDEMPOTENT, {EffectKind.HTTP_POST})
    assert jobs["read_sync"] == (Idempotency.IDEMPOTENT, {EffectKind.HTTP_GET})
    assert jobs["from_method"] == (Idempotency.IDEMPOTENT, {EffectKind.HTTP_DELETE})


def test_a_function_whose_return_is_not_known_leaves_the_call_unresolved(
    scan_project: Scanner,
) -> None:
    assert _jobs(scan_project)["untyped"] == (Idempotency.UNKNOWN, set())


def test_a_module_a_function_returns_keeps_its_own_functions(scan_project: Scanner) -> None:
    """``mod = load_plugin() -> ModuleType``: ``mod.notify(x)`` is the module's function, no
    method of ``ModuleType``; the call stays what it was (a gap the evidence names)."""
    loader = (
        "import importlib\nfrom types import ModuleType\n\n\n"
        "def load_plugin(name) -> ModuleType:\n    return importlib.import_module(name)\n"
    )
    jobs = (
        "import threading\n\nfrom app.loader import load_plugin\n\n\n"
        "def notify(x):\n    plugin = load_plugin('app.plugin')\n    plugin.notify(x)\n\n\n"
        "def view(request):\n    threading.Thread(target=notify, args=(1,)).start()\n"
    )
    inventory = scan_project({"app/__init__.py": "", "app/loader.py": loader, "app/jobs.py": jobs})
    [job] = [j for j in inventory.jobs if j.qualname.endswith(".notify")]
    assert job.idempotency is Idempotency.UNKNOWN
    assert [u.call for u in job.unexplained] == ["plugin.notify"]


def test_a_namespace_or_base_class_returned_types_no_method(scan_project: Scanner) -> None:
    """``-> SimpleNamespace`` (or ``-> abc.ABC``, ``-> enum.Enum``): the value's attributes
    are the project's own callables, not methods of that library class, whose module the
    catalogue calls pure (``types.*``): ``hooks.send(x)`` must stay a gap, never a pure call."""
    hooks = (
        "import abc\nimport types\n\nimport requests\n\n\n"
        "def make_hooks() -> types.SimpleNamespace:\n"
        "    return types.SimpleNamespace(send=lambda x: requests.post('https://h.example', json=x))\n\n\n"
        "def make_base() -> abc.ABC:\n    return build_anything()\n"
    )
    jobs = (
        "import threading\n\nfrom app.hooks import make_base, make_hooks\n\n\n"
        "def through_namespace(x):\n    hooks = make_hooks()\n    hooks.send(x)\n\n\n"
        "def through_base(x):\n    base = make_base()\n    base.deliver(x)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=through_namespace, args=(1,)).start()\n"
        "    threading.Thread(target=through_base, args=(1,)).start()\n"
    )
    inventory = scan_project({"app/__init__.py": "", "app/hooks.py": hooks, "app/jobs.py": jobs})
    verdicts = {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}
    assert verdicts["through_namespace"] is Idempotency.UNKNOWN
    assert verdicts["through_base"] is Idempotency.UNKNOWN


def test_a_namespace_made_at_import_or_called_in_one_expression_is_no_pure_call(
    scan_project: Scanner,
) -> None:
    """The same hole through the older paths: ``make_hooks().send(x)`` written in one
    expression, and ``hooks = make_hooks()`` at module level imported elsewhere, were read as
    ``types.SimpleNamespace.send`` (pure), so a job posting through them was `idempotent`."""
    hooks = (
        "import types\n\nimport requests\n\n\n"
        "def make_hooks() -> types.SimpleNamespace:\n"
        "    return types.SimpleNamespace(send=lambda x: requests.post('https://h.example', json=x))\n\n\n"
        "hooks = make_hooks()\n"
    )
    jobs = (
        "import threading\n\nfrom app.hooks import hooks, make_hooks\n\n\n"
        "def inline(x):\n    make_hooks().send(x)\n\n\n"
        "def module_level(x):\n    hooks.send(x)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=inline, args=(1,)).start()\n"
        "    threading.Thread(target=module_level, args=(1,)).start()\n"
    )
    inventory = scan_project({"app/__init__.py": "", "app/hooks.py": hooks, "app/jobs.py": jobs})
    verdicts = {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}
    assert verdicts == {"inline": Idempotency.UNKNOWN, "module_level": Idempotency.UNKNOWN}


def test_a_final_constant_keeps_its_own_methods(scan_project: Scanner) -> None:
    """``__version__: Final = "1.2"``: ``Final`` qualifies the value's type (a str), it is
    no open class: ``__version__.endswith(...)`` stays a pure call."""
    const = 'from typing import Final\n\n__version__: Final = "2025.1.4"\n'
    jobs = (
        "import threading\n\nimport requests\n\nfrom app.const import __version__\n\n\n"
        "def check(x):\n"
        "    if __version__.endswith('dev'):\n        return\n"
        "    requests.get('https://updates.example', params={'v': x})\n\n\n"
        "def view(request):\n    threading.Thread(target=check, args=(1,)).start()\n"
    )
    inventory = scan_project({"app/__init__.py": "", "app/const.py": const, "app/jobs.py": jobs})
    [job] = [j for j in inventory.jobs if j.qualname.endswith(".check")]
    assert job.idempotency is Idempotency.IDEMPOTENT


def test_final_and_classvar_with_a_type_are_that_type(scan_project: Scanner) -> None:
    """``V: Final[str]`` and ``n: ClassVar[int]`` (PEP 591, 526) are a str and an int: a
    qualifier is no class, so neither value is typed as ``typing.Final`` / ``ClassVar``
    (whose methods the catalogue never lists) nor left untyped."""
    const = (
        "from typing import ClassVar, Final\n\n"
        'CHANNEL: Final[str] = "stable"\n\n\n'
        "class Limits:\n    retries: ClassVar[int] = 3\n    label: Final = 'x'\n"
    )
    summary = extract_source(const, "app/const.py", "app.const")
    assert summary.assignments["CHANNEL"].endswith(".str")
    [limits] = summary.classes
    assert limits.attributes["retries"].endswith(".int")
    assert "label" not in limits.attributes  # typed by nothing: a bare Final says no class
    jobs = (
        "import threading\n\nimport requests\n\nfrom app.const import CHANNEL\n\n\n"
        "def check(x):\n"
        "    if CHANNEL.upper() == 'DEV':\n        return\n"
        "    requests.get('https://updates.example', params={'v': x})\n\n\n"
        "def view(request):\n    threading.Thread(target=check, args=(1,)).start()\n"
    )
    inventory = scan_project({"app/__init__.py": "", "app/const.py": const, "app/jobs.py": jobs})
    [job] = [j for j in inventory.jobs if j.qualname.endswith(".check")]
    assert job.idempotency is Idempotency.IDEMPOTENT
