"""An object made by a project function: ``manager = make_manager()``, then its method.

A call's result was typed where a function uses it (``m = make(); m.run()``), but not when
the method is handed to a spawn (``Thread(target=m.run)``), nor for a module-level name bound
so (a service object built by a factory at import time, used in views here and in other
modules). Both are the class the factory returns: its annotation, or the class every return
builds. What the index cannot type stays a gap, and calling the name itself is calling the
value, not the factory.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

SERVICE = (
    "import smtplib\n\n\n"
    "class Mailer:\n"
    "    def send(self, to):\n"
    "        with smtplib.SMTP('localhost') as smtp:\n"
    "            smtp.sendmail('shop@example.com', [to], 'hello')\n\n\n"
    "class Cache:\n"
    "    def warm(self, key):\n"
    "        return key.upper()\n\n\n"
    "def make_mailer() -> Mailer:\n"
    "    return Mailer()\n\n\n"
    "def make_cache():\n"
    "    return Cache()\n\n\n"
    "def make_anything(flag):\n"
    "    return Mailer() if flag else object()\n\n\n"
    "mailer = make_mailer()\n"
    "cache = make_cache()\n"
    "anything = make_anything(True)\n"
)


def _jobs(inventory: Inventory) -> dict[tuple[str, int], str | None]:
    return {(s.location.path, s.location.line): s.job for s in inventory.sites}


def test_a_method_of_what_a_factory_returns_is_the_job(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    views = (
        "import threading\n\n"
        "from app.service import make_cache, make_mailer\n\n\n"
        "def signup(request):\n"
        "    m = make_mailer()\n"
        "    threading.Thread(target=m.send, args=(request.email,)).start()\n\n\n"
        "def home(request):\n"
        "    c = make_cache()\n"
        "    threading.Thread(target=c.warm, args=('home',)).start()\n"
    )
    inventory = scan_project(
        {"app/__init__.py": "", "app/service.py": SERVICE, "app/views.py": views}
    )
    jobs = _jobs(inventory)
    assert jobs[("app/views.py", 8)] == "app.service.Mailer.send"
    assert jobs[("app/views.py", 13)] == "app.service.Cache.warm"
    verdicts = {j.qualname: j.idempotency for j in inventory.jobs}
    assert verdicts["app.service.Mailer.send"] == Idempotency.NON_IDEMPOTENT
    assert verdicts["app.service.Cache.warm"] == Idempotency.IDEMPOTENT


def test_a_module_level_object_made_by_a_factory_is_typed_here_and_where_imported(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    here = SERVICE + (
        "\n\nimport threading\n\n\n"
        "def notify(request):\n"
        "    threading.Thread(target=mailer.send, args=(request.email,)).start()\n"
    )
    views = (
        "import threading\n\n"
        "from app import service\n"
        "from app.service import cache, mailer\n\n\n"
        "def signup(request):\n"
        "    threading.Thread(target=mailer.send, args=(request.email,)).start()\n\n\n"
        "def home(request):\n"
        "    threading.Thread(target=service.cache.warm, args=('home',)).start()\n\n\n"
        "def later(request):\n"
        "    threading.Thread(target=cache.warm, args=('later',)).start()\n"
    )
    inventory = scan_project({"app/__init__.py": "", "app/service.py": here, "app/views.py": views})
    jobs = _jobs(inventory)
    notify = next(line for line, text in enumerate(here.splitlines(), 1) if "target=mailer" in text)
    assert jobs[("app/service.py", notify)] == "app.service.Mailer.send"
    assert jobs[("app/views.py", 8)] == "app.service.Mailer.send"
    assert jobs[("app/views.py", 12)] == "app.service.Cache.warm"
    assert jobs[("app/views.py", 16)] == "app.service.Cache.warm"


def test_an_untyped_result_stays_unknown_and_calling_the_value_is_not_calling_the_factory(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    views = (
        "import threading\n\n"
        "from app.service import anything, make_anything\n\n\n"
        "def one(request):\n"
        "    a = make_anything(request.flag)\n"
        "    threading.Thread(target=a.send, args=(request.email,)).start()\n\n\n"
        "def two(request):\n"
        "    threading.Thread(target=anything.send, args=(request.email,)).start()\n\n\n"
        "def three(request):\n"
        "    threading.Thread(target=anything, args=(request.email,)).start()\n"
    )
    inventory = scan_project(
        {"app/__init__.py": "", "app/service.py": SERVICE, "app/views.py": views}
    )
    sites = {s.location.line: s for s in inventory.sites if s.location.path == "app/views.py"}
    # make_anything returns a Mailer or something else: which send runs is not known
    assert sites[8].job == "unknown" and "a.send" in sites[8].unresolved_reason
    assert sites[12].job == "unknown" and "anything.send" in sites[12].unresolved_reason
    # ``anything(...)`` calls the value make_anything returned, never make_anything itself
    assert sites[16].job == "unknown"
