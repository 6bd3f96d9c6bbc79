"""Tables of values, names built for ``getattr`` and functions handed to a library.

From Python's semantics, not from any scanned project: ``T[k]`` is one of the values of
the dict ``T`` (whichever key), ``getattr(mod, name)`` one of ``mod``'s attributes, and a
function passed to a call is passed to be called unless the callee keeps it for later or
starts it elsewhere. What cannot be named stays a gap, never silence."""

from __future__ import annotations

from textwrap import dedent

import pytest

from inventory import Idempotency, Inventory, scan
from inventory.models import EffectKind, Job

_FILES = {
    "app/__init__.py": "",
    "app/exporters.py": """
        import requests

        class PdfExporter:
            def export(self, rows):
                with open("/tmp/rows.pdf", "w") as f:
                    f.write(str(rows))

        class WebhookExporter:
            def export(self, rows):
                requests.post("https://hooks.example/rows", json=rows)

        EXPORTERS = {"pdf": PdfExporter(), "hook": WebhookExporter()}
        CLASSES = {"pdf": PdfExporter, "hook": WebhookExporter}
    """,
    "app/chats.py": """
        import requests

        def send_to_slack(text):
            requests.post("https://slack.example/hook", json={"text": text})

        def format_text(text):
            return text.strip()
    """,
    "app/jobs.py": """
        import threading

        import requests
        from reportlab.platypus import SimpleDocTemplate

        from app import chats
        from app.exporters import CLASSES, EXPORTERS

        PLUGINS = {"none": chats.format_text}


        def register(name, plugin):
            PLUGINS[name] = plugin


        def export_inline(kind, rows):
            EXPORTERS[kind].export(rows)


        def export_made(kind, rows):
            CLASSES[kind]().export(rows)


        def run_plugin(name):
            PLUGINS[name].run()


        def fetch(url):
            r = requests.get(url)
            r.raise_for_status()
            return r.json()


        def notify_bound(channel, text):
            sender = getattr(chats, "send_to_" + channel)
            sender(text)


        class Dispatcher:
            def handle(self, kind, payload):
                getattr(self, f"on_{kind}")(payload)

            def on_created(self, payload):
                chats.send_to_slack(str(payload))


        def dispatch(kind, payload):
            Dispatcher().handle(kind, payload)


        def audit(canvas, doc):
            requests.post("https://audit.example/pages", json={"page": doc.page})


        def render(path):
            doc = SimpleDocTemplate(path)
            doc.build([], onFirstPage=audit)


        def beat():
            requests.post("https://monitor.example/beat")


        def start_heartbeat():
            threading.Timer(30, beat).start()


        def subscribe(signal):
            signal.connect(beat)


        def view(request):
            threading.Thread(target=export_inline, args=("pdf", [])).start()
            threading.Thread(target=export_made, args=("pdf", [])).start()
            threading.Thread(target=run_plugin, args=("x",)).start()
            threading.Thread(target=fetch, args=("u",)).start()
            threading.Thread(target=notify_bound, args=("slack", "x")).start()
            threading.Thread(target=dispatch, args=("created", {})).start()
            threading.Thread(target=render, args=("/tmp/x.pdf",)).start()
            threading.Thread(target=start_heartbeat).start()
            threading.Thread(target=subscribe, args=(None,)).start()
    """,
}


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("tables") / "app"
    for path, text in _FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(dedent(text).lstrip(), encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


def _job(inventory: Inventory, name: str) -> Job:
    found = inventory.job(f"app.jobs.{name}")
    assert found is not None, name
    return found


def _effects(job: Job) -> set[tuple[EffectKind, str]]:
    return {(e.kind, e.chain[-1]) for e in job.effects}


@pytest.mark.parametrize("name", ["export_inline", "export_made"])
def test_a_table_lookup_runs_every_value(inventory: Inventory, name: str) -> None:
    job = _job(inventory, name)
    assert _effects(job) == {
        (EffectKind.FILE_WRITE, "app.exporters.PdfExporter.export"),
        (EffectKind.HTTP_POST, "app.exporters.WebhookExporter.export"),
    }
    assert job.idempotency is Idempotency.NON_IDEMPOTENT


def test_a_table_the_module_adds_to_is_a_gap(inventory: Inventory) -> None:
    job = _job(inventory, "run_plugin")
    assert job.idempotency is Idempotency.UNKNOWN
    assert any("PLUGINS[name].run" in e.message for e in job.evidence)


def test_a_module_function_named_get_is_no_table(inventory: Inventory) -> None:
    """``requests.get(url)`` keeps its typed response: ``r.raise_for_status()`` is no gap."""
    job = _job(inventory, "fetch")
    assert job.idempotency is Idempotency.IDEMPOTENT


def test_getattr_with_a_literal_prefix_runs_the_names_that_fit(inventory: Inventory) -> None:
    job = _job(inventory, "notify_bound")
    assert _effects(job) == {(EffectKind.HTTP_POST, "app.chats.send_to_slack")}
    assert job.idempotency is Idempotency.NON_IDEMPOTENT


def test_getattr_on_self_runs_the_class_s_methods_that_fit(inventory: Inventory) -> None:
    job = _job(inventory, "dispatch")
    assert _effects(job) == {(EffectKind.HTTP_POST, "app.chats.send_to_slack")}
    assert not any(e.kind is EffectKind.DYNAMIC_CALL for e in job.effects)


def test_a_function_handed_to_a_library_is_called_there(inventory: Inventory) -> None:
    job = _job(inventory, "render")
    assert (EffectKind.HTTP_POST, "app.jobs.audit") in _effects(job)


def test_a_function_kept_for_later_is_not_called_there(inventory: Inventory) -> None:
    """``signal.connect(beat)`` registers ``beat``: nothing of it runs in ``subscribe``."""
    job = _job(inventory, "subscribe")
    assert job.effects == []


def test_a_function_started_elsewhere_stays_a_site(inventory: Inventory) -> None:
    """``Timer(30, beat)`` is a site of its own (background work), not a call of ``beat``."""
    sites = [s for s in inventory.sites if s.enclosing_function == "app.jobs.start_heartbeat"]
    assert [(s.job, s.pattern.value) for s in sites] == [("app.jobs.beat", "thread")]
