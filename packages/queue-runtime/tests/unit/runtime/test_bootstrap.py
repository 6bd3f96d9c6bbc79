"""queue_runtime.bootstrap: the framework a worker sets up, the scope of each job, the advice.

The Flask app is set up in this process (an app is an object); Django's set-up is
process-wide (``django.setup()``), so it runs in a subprocess of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Flask and Django are the `test-frameworks` extra: absent from the runtime-alone CI
# environment (Flask brings click); these tests run in the full environment.
pytest.importorskip("flask", reason="Flask is not installed (the test-frameworks extra)")
pytest.importorskip("django", reason="Django is not installed (the test-frameworks extra)")

from flask import current_app, url_for

from queue_runtime import Settings
from queue_runtime._settings_load import load_settings
from queue_runtime.bootstrap import (
    BootstrapError,
    Framework,
    FrameworkSpec,
    bootstrap,
    describe_worker_bootstrap,
    detect,
    job_scope,
)
from queue_runtime.config import UrlScheme
from queue_runtime.errors import ConfigError

APPS = Path(__file__).resolve().parents[2] / "fixtures" / "framework_apps"


@pytest.fixture
def apps_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(APPS))


def test_settings_name_one_framework_and_flask_options_need_a_flask_app() -> None:
    spec = FrameworkSpec.of(Settings(flask_app="a:create_app", server_name="x.example"))
    assert spec.framework is Framework.FLASK and spec.server_name == "x.example"
    assert FrameworkSpec.of(Settings(django_settings="s")).framework is Framework.DJANGO
    assert FrameworkSpec.of(Settings()).framework is Framework.NONE
    with pytest.raises(ValueError, match="exclusive"):
        Settings(django_settings="s", flask_app="a:app")
    with pytest.raises(ValueError, match="configure a flask_app"):
        Settings(server_name="x.example")


def test_framework_fields_come_from_pyproject_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.queue_runtime]\nflask-app = "shop.app:create_app"\nurl-scheme = "https"\n'
    )
    settings = load_settings(cwd=tmp_path, env={"QUEUE_RUNTIME_SERVER_NAME": "shop.example"})
    assert settings.flask_app == "shop.app:create_app"
    assert (settings.server_name, settings.url_scheme) == ("shop.example", UrlScheme.HTTPS)
    with pytest.raises(ConfigError, match="exclusive"):
        load_settings(cwd=tmp_path, env={"QUEUE_RUNTIME_DJANGO_SETTINGS": "shop.settings"})


def test_a_plain_app_gets_an_empty_scope() -> None:
    with job_scope(Settings())():
        pass
    assert bootstrap(Settings()).framework is Framework.NONE


@pytest.mark.usefixtures("apps_on_path")
def test_flask_factory_runs_once_and_each_job_gets_an_app_context_with_real_links() -> None:
    import flask_site

    spec = FrameworkSpec(
        flask_app="flask_site:create_app", server_name="shop.example", url_scheme=UrlScheme.HTTPS
    )
    calls = len(flask_site.FACTORY_CALLS)
    context = bootstrap(spec)
    assert bootstrap(spec) is context and len(flask_site.FACTORY_CALLS) == calls + 1
    with context.job_scope():
        link = url_for("order", order_id=7, _external=True)
        sender = current_app.config["SHOP_SENDER"]
    assert (link, sender) == ("https://shop.example/orders/7", "orders@shop.example")
    with pytest.raises(RuntimeError, match="application context"):
        current_app.config  # noqa: B018  (outside the scope there is no app)


@pytest.mark.usefixtures("apps_on_path")
def test_with_a_server_name_each_flask_job_gets_a_blank_request_for_that_host() -> None:
    # Code moved out of a view reads session / request (a locale selector): a first visit.
    from flask import has_request_context, request, session

    spec = FrameworkSpec(flask_app="flask_site:create_app", server_name="shop.example")
    with bootstrap(spec).job_scope():
        assert has_request_context() and request.host == "shop.example"
        assert dict(session) == {} and request.accept_languages.best_match(["en"]) is None
    assert not has_request_context()


@pytest.mark.usefixtures("apps_on_path")
def test_flask_without_a_server_name_cannot_build_external_links() -> None:
    with bootstrap(FrameworkSpec(flask_app="flask_site.wsgi:app")).job_scope():
        assert current_app.name == "flask_site"
        with pytest.raises(RuntimeError, match="SERVER_NAME"):
            url_for("order", order_id=1, _external=True)


@pytest.mark.usefixtures("apps_on_path")
def test_flask_targets_name_an_app_object_a_factory_or_a_module() -> None:
    for target in ("flask_site.wsgi:app", "flask_site.wsgi", "flask_site"):
        with bootstrap(FrameworkSpec(flask_app=target)).job_scope():
            assert current_app.name == "flask_site"
    with pytest.raises(BootstrapError, match="no Flask app or app factory"):
        bootstrap(FrameworkSpec(flask_app="flask_site.jobs:nothing"))
    with pytest.raises(BootstrapError, match="cannot import"):
        bootstrap(FrameworkSpec(flask_app="no_such_module_here:app"))


def test_django_setup_before_the_app_module_and_connections_closed_after_each_job(
    tmp_path: Path,
) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        from queue_runtime.bootstrap import FrameworkSpec, bootstrap
        try:
            import djsite.jobs
        except Exception as exc:  # the app module needs django.setup()
            before = type(exc).__name__
        context = bootstrap(FrameworkSpec(django_settings="djsite.settings"))
        import djsite.jobs
        from django.db import connection
        with context.job_scope():
            connection.cursor().execute("SELECT 1")
            inside = connection.connection is not None
        print(json.dumps({"before": before, "inside": inside,
                          "after": connection.connection is not None}))
        """
    )
    env = {"PYTHONPATH": str(APPS), "DJSITE_DB": str(tmp_path / "db.sqlite3"), "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "before": "ImproperlyConfigured",
        "inside": True,
        "after": False,
    }


def _write(root: Path, files: dict[Path, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_detect_reads_a_django_project_from_manage_py(tmp_path: Path) -> None:
    manage = 'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")\n'
    found = detect(_write(tmp_path, {Path("manage.py"): manage}))
    assert found.spec == FrameworkSpec(django_settings="mysite.settings")
    assert "--django-settings mysite.settings" in found.describe()
    assert "django.setup()" in found.describe()


def test_detect_finds_a_flask_factory_and_asks_for_a_server_name_for_links(
    tmp_path: Path,
) -> None:
    files = {
        Path("src/budget/run.py"): "from flask import Flask\n\ndef create_app():\n    ...\n",
        Path("src/budget/mail.py"): "link = url_for('home', _external=True)\n",
        Path("src/budget/tests/test_x.py"): "app = Flask(__name__)\n",
    }
    found = detect(_write(tmp_path, files))
    assert found.spec.flask_app == "budget.run:create_app"
    assert found.external_links == ["src/budget/mail.py"]
    text = describe_worker_bootstrap(tmp_path)
    assert "--flask-app budget.run:create_app --server-name HOST --url-scheme https" in text
    assert "url_for(..., _external=True) in src/budget/mail.py" in text


def test_detect_prefers_the_configuration_and_knows_a_plain_app(tmp_path: Path) -> None:
    assert detect(tmp_path).framework is Framework.NONE
    assert "no framework context" in describe_worker_bootstrap(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.queue_runtime]\nflask_app = "shop:app"\n')
    found = detect(tmp_path)
    assert found.configured and found.spec.flask_app == "shop:app"
    assert "from [tool.queue_runtime]" in found.describe()


@pytest.mark.usefixtures("apps_on_path")
def test_a_function_reading_current_app_has_the_same_fingerprint_in_and_out_of_the_app() -> None:
    # `migrator gate --app` and the load test fingerprint jobs outside any app context.
    from flask_site.mailer import order_sender

    from queue_runtime.gate import fingerprint

    outside = fingerprint(order_sender)
    with bootstrap(FrameworkSpec(flask_app="flask_site.wsgi:app")).job_scope():
        assert fingerprint(order_sender) == outside


def test_django_code_without_a_settings_module_is_told_it_needs_one(tmp_path: Path) -> None:
    """A reusable Django app (no manage.py): its jobs read settings and send mail through
    Django, so workers need ``django.setup()`` with the installing project's settings."""
    files = {Path("otp/utils.py"): "from django.core.mail import send_mail\n"}
    found = detect(_write(tmp_path, files))
    assert found.framework is Framework.DJANGO
    text = found.describe()
    assert "Workers need Django" in text and "--django-settings SETTINGS_MODULE" in text
    assert "no framework context" not in text
