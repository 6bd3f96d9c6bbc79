"""Flask and Django handlers that return the job's result: enqueue, answer 202, add the status view."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from codemods import ApplyOptions, ApplyResult, Status, plan_apply, write
from inventory.models import Argument, Framework, Idempotency, Inventory, Pattern
from tools.apply_docs import site_line

Build = Callable[..., Inventory]
Files = Callable[[dict[str, str]], Path]

JOB = "def export_report(day):\n    return day\n"

FLASK_VIEWS = (
    "from flask import Blueprint, render_template\n\n"
    "reports = Blueprint('reports', __name__, url_prefix='/reports')\n\n\n"
    + JOB
    + "\n\n@reports.post('/<day>')\ndef export(day):\n"
    "    report = export_report(day)\n    return render_template('report.html', report=report)\n"
)
FLASK_AFTER_VIEW = (
    "@reports.post('/<day>')\ndef export(day):\n    job_handle = export_report.enqueue(day)\n"
    '    return jsonify(job_id=job_handle.id, status_url=url_for(".job_status", job_id=job_handle.id)), 202\n'
)
FLASK_STATUS = '\n\n@reports.route("/jobs/<int:job_id>")\ndef job_status(job_id):\n'

METHOD_VIEW = (
    "from flask import Flask\nfrom flask.views import MethodView\n\napp = Flask(__name__)\n\n\n"
    + JOB
    + "\n\nclass Export(MethodView):\n    def post(self, day):\n        return export_report(day)\n\n\n"
    "app.add_url_rule('/export/<day>', view_func=Export.as_view('export'))\n"
)

DJANGO_VIEWS = (
    '"""Order views."""\n\n'
    "from django.shortcuts import render\n\nfrom orders.reports import export_report\n\n\n"
    "def export(request, day):\n    report = export_report(day)\n"
    "    return render(request, 'report.html', {'report': report})\n"
)
DJANGO_URLS = (
    "from django.urls import path\n\nfrom . import views\n\napp_name = 'orders'\n\n"
    "urlpatterns = [\n    path('export/<day>/', views.export, name='export'),\n]\n"
)


def _plan(root: Path, build: Build, path: str, fragment: str, handler: Framework) -> ApplyResult:
    job = f"{path.removesuffix('.py').replace('/', '.')}.export_report"
    if handler is Framework.DJANGO:
        job = "orders.reports.export_report"
    inventory = build(
        root, [(path, fragment, Pattern.DIRECT_CALL, job)], handler=handler, result_used=True
    )
    return plan_apply(root, inventory, scanner=None)


def _ruff_f_clean(root: Path) -> str:
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "F", "--no-cache", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout if found.returncode else ""


def test_a_view_reading_the_result_of_a_job_moved_undecided_keeps_its_response(
    write_files: Files, build_inventory: Build
) -> None:
    """A job the scan could not decide, named, moves held inline by the gate, but a 202 answer
    would change the response even while it runs inline: such a site stays, for a human."""
    root = write_files({"acme/__init__.py": "", "acme/views.py": FLASK_VIEWS})
    inventory = build_inventory(
        root,
        [
            (
                "acme/views.py",
                "report = export_report",
                Pattern.DIRECT_CALL,
                "acme.views.export_report",
            )
        ],
        {"acme.views.export_report": Idempotency.UNKNOWN},
        handler=Framework.FLASK,
        result_used=True,
    )
    named = ApplyOptions(jobs=("acme.views.export_report",))
    result = plan_apply(root, inventory, named, scanner=None)
    [outcome] = result.outcomes
    assert outcome.status is Status.MANUAL and "the caller uses the result" in outcome.reason
    assert not result.changes


def test_flask_blueprint_view_answers_202_and_gets_a_status_route(
    write_files: Files, build_inventory: Build
) -> None:
    root = write_files({"acme/__init__.py": "", "acme/views.py": FLASK_VIEWS})

    result = _plan(
        root, build_inventory, "acme/views.py", "report = export_report", Framework.FLASK
    )

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    [change] = result.changes
    assert change.after.startswith(
        "import queue_runtime\nfrom flask import Blueprint, abort, jsonify, url_for\n"
        "from queue_runtime import job\n"
    )
    assert FLASK_AFTER_VIEW + FLASK_STATUS in change.after
    assert "queue_runtime.get_job(job_id).record()" in change.after
    write(result)
    assert _ruff_f_clean(root) == ""


def test_flask_second_run_adds_nothing(write_files: Files, build_inventory: Build) -> None:
    root = write_files({"acme/__init__.py": "", "acme/views.py": FLASK_VIEWS})
    write(_plan(root, build_inventory, "acme/views.py", "report = export_report", Framework.FLASK))

    again = _plan(root, build_inventory, "acme/views.py", "job_handle = ", Framework.FLASK)

    assert again.changes == []
    assert [o.status for o in again.outcomes] == [Status.ALREADY]


def test_flask_method_view_registered_on_the_app(
    write_files: Files, build_inventory: Build
) -> None:
    root = write_files({"acme/__init__.py": "", "acme/views.py": METHOD_VIEW})

    result = _plan(root, build_inventory, "acme/views.py", "return export_report", Framework.FLASK)

    [change] = result.changes
    assert (
        "    def post(self, day):\n        job_handle = export_report.enqueue(day)\n"
        '        return jsonify(job_id=job_handle.id, status_url=url_for(".job_status", '
        "job_id=job_handle.id)), 202\n"
    ) in change.after
    assert '@app.route("/jobs/<int:job_id>")\ndef job_status(job_id):' in change.after
    write(result)
    assert _ruff_f_clean(root) == ""


def test_flask_result_that_decides_a_redirect_or_flash_stays_manual(
    write_files: Files, build_inventory: Build
) -> None:
    redirect = FLASK_VIEWS.replace(
        "return render_template('report.html', report=report)",
        "return redirect(url_for('done', ok=report))",
    ).replace("render_template", "redirect, url_for")
    flashed = FLASK_VIEWS.replace(
        "    return render_template", "    flash(report)\n    return render_template"
    )
    for views in (redirect, flashed):
        root = write_files({"acme/__init__.py": "", "acme/views.py": views})
        result = _plan(
            root, build_inventory, "acme/views.py", "report = export_report", Framework.FLASK
        )
        assert result.changes == []
        assert [o.status for o in result.outcomes] == [Status.MANUAL]


def test_flask_view_without_a_module_level_owner_stays_manual(
    write_files: Files, build_inventory: Build
) -> None:
    factory = FLASK_VIEWS.replace(
        "reports = Blueprint('reports', __name__, url_prefix='/reports')",
        "from acme.app import reports",
    )
    root = write_files({"acme/__init__.py": "", "acme/views.py": factory})

    result = _plan(
        root, build_inventory, "acme/views.py", "report = export_report", Framework.FLASK
    )

    assert result.changes == []
    assert [o.status for o in result.outcomes] == [Status.MANUAL]


def _django_files(urls: str = DJANGO_URLS) -> dict[str, str]:
    return {
        "orders/__init__.py": "",
        "orders/reports.py": JOB,
        "orders/views.py": DJANGO_VIEWS,
        "orders/urls.py": urls,
    }


def test_django_function_view_answers_202_with_a_status_view_and_pattern(
    write_files: Files, build_inventory: Build
) -> None:
    root = write_files(_django_files())

    result = _plan(
        root, build_inventory, "orders/views.py", "report = export_report", Framework.DJANGO
    )

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    changes = {c.path: c for c in result.changes}
    assert changes["orders/views.py"].after == (
        '"""Order views."""\n\n'
        "from django.http import JsonResponse\nfrom django.urls import reverse\n\n"
        "from orders.reports import export_report\n\n\n"
        "def export(request, day):\n    job_handle = export_report.enqueue(day)\n"
        '    return JsonResponse({"job_id": job_handle.id, "status_url": '
        'reverse("orders:job_status", args=[job_handle.id])}, status=202)\n'
    )
    assert changes["orders/urls.py"].after == (
        "from django.urls import path\n\nfrom orders import job_status\n\nfrom . import views\n\n"
        "app_name = 'orders'\n\nurlpatterns = [\n"
        "    path('export/<day>/', views.export, name='export'),\n"
        '    path("jobs/<int:job_id>/", job_status.job_status, name="job_status"),\n]\n'
    )
    assert changes["orders/job_status.py"].created
    assert "def job_status(request, job_id):" in changes["orders/job_status.py"].after
    write(result)
    assert _ruff_f_clean(root) == ""


def test_django_second_run_adds_nothing(write_files: Files, build_inventory: Build) -> None:
    root = write_files(_django_files())
    write(
        _plan(root, build_inventory, "orders/views.py", "report = export_report", Framework.DJANGO)
    )

    again = _plan(root, build_inventory, "orders/views.py", "job_handle = ", Framework.DJANGO)

    assert again.changes == []
    assert [o.status for o in again.outcomes] == [Status.ALREADY]


def test_django_class_based_view_method(write_files: Files, build_inventory: Build) -> None:
    files = _django_files(
        DJANGO_URLS.replace("app_name = 'orders'\n\n", "").replace(
            "views.export,", "views.Export.as_view(),"
        )
    )
    files["orders/views.py"] = (
        "from django.views import View\n\nfrom orders.reports import export_report\n\n\n"
        "class Export(View):\n    def post(self, request, day):\n        return export_report(day)\n"
    )
    root = write_files(files)

    result = _plan(
        root, build_inventory, "orders/views.py", "return export_report", Framework.DJANGO
    )

    changes = {c.path: c for c in result.changes}
    assert 'reverse("job_status", args=[job_handle.id])' in changes["orders/views.py"].after
    assert "job_status.job_status" in changes["orders/urls.py"].after
    write(result)
    assert _ruff_f_clean(root) == ""


def test_django_view_not_routed_by_its_urls_py_stays_manual(
    write_files: Files, build_inventory: Build
) -> None:
    for files in (
        {k: v for k, v in _django_files().items() if k != "orders/urls.py"},
        _django_files(DJANGO_URLS.replace("views.export", "views.other")),
        _django_files(DJANGO_URLS.replace("urlpatterns = [", "urlpatterns = tuple([")),
    ):
        root = write_files(files)
        result = _plan(
            root, build_inventory, "orders/views.py", "report = export_report", Framework.DJANGO
        )
        assert result.changes == []
        assert [o.status for o in result.outcomes] == [Status.MANUAL]


def test_flask_manual_site_reports_the_lines_and_the_two_options(
    write_files: Files, build_inventory: Build
) -> None:
    flashed = FLASK_VIEWS.replace(
        "    return render_template", "    flash(report)\n    return render_template"
    )
    root = write_files({"acme/__init__.py": "", "acme/views.py": flashed})
    lines = [site_line(flashed, "flash(report)"), site_line(flashed, "return render_template")]
    site = (
        "acme/views.py",
        "report = export_report",
        Pattern.DIRECT_CALL,
        "acme.views.export_report",
    )
    inventory = build_inventory(
        root, [site], handler=Framework.FLASK, result_used=True, result_use_lines=lines
    )

    [outcome] = plan_apply(root, inventory, scanner=None).outcomes

    assert (outcome.status, outcome.lines) == (Status.MANUAL, lines)
    assert f"lines {lines[0]}, {lines[1]}" in outcome.reason
    assert "keep this site inline" in outcome.reason and "we will send" in outcome.reason


def test_a_result_used_site_with_an_unproven_argument_answers_202_checked_at_run_time(
    write_files: Files, build_inventory: Build
) -> None:
    views = FLASK_VIEWS.replace("def export(day):", "def export(day, thing):").replace(
        "export_report(day)\n    return", "export_report(thing)\n    return"
    )
    root = write_files({"acme/__init__.py": "", "acme/views.py": views})
    inventory = build_inventory(
        root,
        [
            (
                "acme/views.py",
                "report = export_report",
                Pattern.DIRECT_CALL,
                "acme.views.export_report",
            )
        ],
        handler=Framework.FLASK,
        result_used=True,
    )
    inventory.sites[0].arguments = [Argument(name="#0", source="thing", serialisable=None)]

    [outcome] = plan_apply(root, inventory, scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert outcome.arguments_note() == (
        "thing: checked at run time: falls back to running in-process if not storable "
        "(parameter `thing` has no annotation)"
    )


def test_django_pattern_goes_last_without_copying_the_comment_above_the_last_one(
    write_files: Files, build_inventory: Build
) -> None:
    urls = (
        "from django.urls import path\n\nfrom . import views\n\napp_name = 'orders'\n\n"
        "urlpatterns = [\n    path('a/', views.export, name='a'),\n\n    # exports\n"
        "    path('export/<day>/', views.export, name='export'),  # the report\n"
        "    # more to come\n]\n"
    )
    root = write_files(_django_files(urls))

    result = _plan(
        root, build_inventory, "orders/views.py", "report = export_report", Framework.DJANGO
    )

    changes = {c.path: c for c in result.changes}
    assert changes["orders/urls.py"].after.endswith(
        "urlpatterns = [\n    path('a/', views.export, name='a'),\n\n    # exports\n"
        "    path('export/<day>/', views.export, name='export'),  # the report\n"
        "    # more to come\n"
        '    path("jobs/<int:job_id>/", job_status.job_status, name="job_status"),\n]\n'
    )
