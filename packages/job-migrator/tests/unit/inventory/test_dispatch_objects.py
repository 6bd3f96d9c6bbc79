"""Calls through objects stored on the app, proxies and pluggable classes: resolved, or a gap."""

from __future__ import annotations

from textwrap import dedent

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import CallSite, EffectKind, Idempotency, Job

_MAILER = """
import smtplib

class Mailer:
    def deliver(self, to):
        smtplib.SMTP("localhost").sendmail("a@example.com", [to], "hi")
"""
_HOOKS = """
import requests

class Hooks:
    def deliver(self, to):
        requests.post("https://hooks.example.com", json={"to": to})
"""


def scan(files: dict[str, str]) -> tuple[list[CallSite], dict[str, Job]]:
    summaries = []
    for path, source in {"app/__init__.py": "", **files}.items():
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(
            extract_source(dedent(source), path, module, path.endswith("/__init__.py"))
        )
    config = MigratorConfig()
    sites, jobs = classify(summaries, config, Catalogue.load(config.catalogue))
    return sites, {job.qualname: job for job in jobs}


def view(imports: str, call: str) -> str:
    return f"""
from flask import Blueprint
{imports}

bp = Blueprint("v", __name__)

@bp.route("/reset", methods=["POST"])
def reset():
    {call}
    return ""
"""


def test_an_extension_registered_nowhere_is_an_unknown_site_naming_the_call() -> None:
    files = {
        "app/ext.py": (
            "from flask import current_app\nfrom werkzeug.local import LocalProxy\n\n"
            'accounts = LocalProxy(lambda: current_app.extensions["accounts"])\n'
        ),
        "app/views.py": view("from app.ext import accounts", 'accounts.reset_password("a@b")'),
    }
    sites, _ = scan(files)
    (site,) = sites
    assert site.job == "unknown"
    assert site.idempotency == Idempotency.UNKNOWN
    assert "accounts.reset_password" in site.unresolved_reason
    assert "'accounts'" in site.unresolved_reason


def test_a_key_two_classes_register_runs_either() -> None:
    files = {
        "app/mail.py": _MAILER,
        "app/hooks.py": _HOOKS,
        "app/setup.py": (
            "from app.hooks import Hooks\nfrom app.mail import Mailer\n\n"
            "def init_mail(app):\n"
            '    app.extensions["notify"] = Mailer()\n\n'
            "def init_hooks(app):\n"
            '    app.extensions["notify"] = Hooks()\n'
        ),
        "app/views.py": view(
            "from flask import current_app", 'current_app.extensions["notify"].deliver("a@b")'
        ),
    }
    sites, jobs = scan(files)
    assert {s.job for s in sites} == {"app.mail.Mailer.deliver", "app.hooks.Hooks.deliver"}
    assert {e.kind for e in jobs["app.hooks.Hooks.deliver"].effects} == {EffectKind.HTTP_POST}


def test_a_local_proxy_of_a_getter_stands_for_what_the_getter_returns() -> None:
    files = {
        "app/mail.py": _MAILER,
        "app/ext.py": (
            "from flask import current_app\nfrom werkzeug.local import LocalProxy\n"
            "from app.mail import Mailer\n\n"
            "class Ext:\n"
            "    def init_app(self, app):\n"
            "        self.mailer = Mailer()\n"
            '        app.extensions["ext"] = self\n\n'
            "def _get_ext():\n"
            '    return current_app.extensions["ext"]\n\n'
            "ext = LocalProxy(_get_ext)\n"
        ),
        "app/views.py": view("from app.ext import ext", 'ext.mailer.deliver("a@b")'),
    }
    sites, _ = scan(files)
    assert [s.job for s in sites] == ["app.mail.Mailer.deliver"]


def test_an_object_stored_on_g_is_read_back_through_g() -> None:
    files = {
        "app/mail.py": _MAILER,
        "app/hooks_setup.py": (
            "from flask import g\nfrom app.mail import Mailer\n\n"
            "def before_request():\n    g.mailer = Mailer()\n"
        ),
        "app/views.py": view("from flask import g", 'g.mailer.deliver("a@b")'),
    }
    sites, _ = scan(files)
    assert [s.job for s in sites] == ["app.mail.Mailer.deliver"]


def test_a_class_chosen_by_a_parameter_default_and_read_through_a_property() -> None:
    files = {
        "app/mail.py": _MAILER,
        "app/ext.py": (
            "from flask import current_app\nfrom werkzeug.local import LocalProxy\n"
            "from app.mail import Mailer\n\n"
            "class Ext:\n"
            "    def __init__(self, app=None, mailer_cls=Mailer):\n"
            "        self.mailer_cls = mailer_cls\n\n"
            "    def init_app(self, app):\n"
            "        self._mailer = self.mailer_cls()\n"
            '        app.extensions["ext"] = self\n\n'
            "    @property\n"
            "    def mailer(self):\n"
            "        return self._mailer\n\n"
            'ext = LocalProxy(lambda: current_app.extensions["ext"])\n'
        ),
        "app/views.py": view("from app.ext import ext", 'ext.mailer.deliver("a@b")'),
    }
    sites, _ = scan(files)
    assert [s.job for s in sites] == ["app.mail.Mailer.deliver"]


def test_an_attribute_of_unknown_type_on_a_registered_extension_is_a_gap() -> None:
    files = {
        "app/ext.py": (
            "from flask import current_app\nfrom werkzeug.local import LocalProxy\n\n"
            "class Ext:\n"
            "    def init_app(self, app, backend):\n"
            "        self.backend = backend\n"
            '        app.extensions["ext"] = self\n\n'
            'ext = LocalProxy(lambda: current_app.extensions["ext"])\n'
        ),
        "app/views.py": view("from app.ext import ext", 'ext.backend.notify("a@b")'),
    }
    sites, _ = scan(files)
    (site,) = sites
    assert site.job == "unknown"
    assert "ext.backend.notify" in site.unresolved_reason
