"""What an HTTP client's request returns, typed from each library's API reference; importing
a module by a computed name is not a gap.

Written from the clients' documentation, not from any scanned project: requests' API page
(``requests.get`` and a ``Session``'s methods return a ``Response``), httpx's (module
functions, ``Client`` / ``AsyncClient`` methods and ``stream`` give an ``httpx.Response``),
aiohttp's client reference (``async with session.get(url) as resp``, or awaited: a
``ClientResponse``), urllib3's (``PoolManager.request`` returns a ``BaseHTTPResponse``) and
Pillow's Image reference. Before, the response was of unknown type: ``r.raise_for_status()``
was a gap and a job whose only effect is a GET came out ``unknown``."""

from __future__ import annotations

import pytest

from inventory import Idempotency, Inventory, scan
from inventory._extract import extract_source
from inventory.models import EffectKind
from inventory.summary import FactKind

_JOBS = """\
import threading
from importlib import import_module
from urllib.request import urlopen

import aiohttp
import httpx
import requests
import urllib3
from PIL import Image


def with_requests(url):
    r = requests.get(url, timeout=5)
    r.raise_for_status()
    return r.json(), requests.head(url).headers


def with_a_session(url):
    session = requests.Session()
    retry = urllib3.util.Retry(total=3)
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=retry))
    response = session.get(url, auth=requests.auth.HTTPBasicAuth("u", "p"))
    response.raise_for_status()
    for chunk in response.iter_content(1024):
        pass
    response.close()


def with_httpx(url):
    with httpx.Client() as client:
        with client.stream("GET", url) as response:
            response.raise_for_status()
            response.read()
    return httpx.get(url).text


async def with_httpx_async(url):
    async with httpx.AsyncClient(timeout=httpx.Timeout(5)) as client:
        response = await client.get(url)
        response.raise_for_status()
        return response.json()


async def with_aiohttp(url):
    timeout = aiohttp.ClientTimeout(total=5)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.get(url) as resp:
            resp.raise_for_status()
            body = await resp.text()
        resp = await session.get(url)
        await resp.read()
        resp.release()
    return body


def with_urllib3(url):
    http = urllib3.PoolManager()
    response = http.request("GET", url)
    response.release_conn()
    with urlopen(url) as page:
        page.read()
    return response.json()


def posts(url):
    r = requests.post(url, json={"a": 1})
    r.raise_for_status()


def untyped_client(client, url):
    response = client.get(url)
    response.raise_for_status()


def thumbnail(path, out):
    image = Image.open(path)
    image = image.convert("RGB").crop((0, 0, 10, 10))
    image.getexif()
    image.save(out)


def plugin_version(name):
    return import_module(f"app.plugins.{name}").VERSION


def run_plugin(name):
    import_module(f"app.plugins.{name}").run()


def start(url, client):
    threading.Thread(target=with_requests, args=(url,)).start()
    threading.Thread(target=with_a_session, args=(url,)).start()
    threading.Thread(target=with_httpx, args=(url,)).start()
    threading.Thread(target=with_urllib3, args=(url,)).start()
    threading.Thread(target=posts, args=(url,)).start()
    threading.Thread(target=untyped_client, args=(client, url)).start()
    threading.Thread(target=thumbnail, args=(url, url)).start()
    threading.Thread(target=plugin_version, args=(url,)).start()
    threading.Thread(target=run_plugin, args=(url,)).start()
"""

_ASYNC_SITES = """\
import asyncio

from .jobs import with_aiohttp, with_httpx_async


async def view(url):
    asyncio.create_task(with_aiohttp(url))
    asyncio.create_task(with_httpx_async(url))
"""


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    package = tmp_path_factory.mktemp("http") / "app"
    package.mkdir()
    for name, text in {"__init__.py": "", "jobs.py": _JOBS, "views.py": _ASYNC_SITES}.items():
        (package / name).write_text(text, encoding="utf-8")
    return scan(package.parent, use_cache=False, jobs=1, write=False)


_GET, _POST = EffectKind.HTTP_GET, EffectKind.HTTP_POST
_SAFE = Idempotency.IDEMPOTENT


@pytest.mark.parametrize(
    ("job", "verdict", "kinds"),
    [
        ("with_requests", _SAFE, {_GET}),
        ("with_a_session", _SAFE, {_GET}),
        ("with_httpx", _SAFE, {_GET}),
        ("with_httpx_async", _SAFE, {_GET}),
        ("with_aiohttp", _SAFE, {_GET}),
        ("with_urllib3", _SAFE, {_GET}),
        ("posts", Idempotency.NON_IDEMPOTENT, {_POST}),
        ("thumbnail", _SAFE, {EffectKind.IMAGE_PROCESS, EffectKind.FILE_WRITE}),
        ("plugin_version", _SAFE, set()),
    ],
)
def test_a_request_is_the_effect_and_its_response_only_read(
    inventory: Inventory, job: str, verdict: Idempotency, kinds: set[EffectKind]
) -> None:
    found = inventory.job(f"app.jobs.{job}")
    assert found is not None
    assert found.idempotency == verdict, [e.message for e in found.evidence]
    assert {e.kind for e in found.effects} == kinds
    gaps = [e.message for e in found.evidence if e.message.startswith("unresolved calls")]
    assert gaps == []


def test_a_response_of_an_untyped_client_keeps_its_gap(inventory: Inventory) -> None:
    """No guess by method name: ``client`` is a parameter, so ``response`` is of unknown type."""
    found = inventory.job("app.jobs.untyped_client")
    assert found is not None
    assert found.idempotency == Idempotency.UNKNOWN
    assert any("response.raise_for_status" in e.message for e in found.evidence)


def test_a_call_on_a_module_imported_by_a_computed_name_stays_a_gap(
    inventory: Inventory,
) -> None:
    found = inventory.job("app.jobs.run_plugin")
    assert found is not None
    assert found.idempotency == Idempotency.UNKNOWN
    messages = [e.message for e in found.evidence]
    assert any(m.startswith("unresolved calls") and ".run" in m for m in messages), messages
    assert not any("import_module(f" in m for m in messages), messages


def test_import_string_then_a_call_of_what_it_loaded_is_dynamic() -> None:
    """Django's ``import_string(path)`` imports and looks an attribute up; calling the result
    calls something only known at run time."""
    summary = extract_source(
        "from django.utils.module_loading import import_string\n\n"
        "def build(path):\n"
        "    backend = import_string(path)\n"
        "    return backend()\n",
        "app/x.py",
        "app.x",
    )
    facts = [f.target for fn in summary.functions for f in fn.facts]
    assert facts == ["variable backend"]
    assert all(f.kind == FactKind.DYNAMIC_DISPATCH for fn in summary.functions for f in fn.facts)
