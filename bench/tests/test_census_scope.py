"""The census's rule for correct misses (``bench/census/_scope.py``) on a small synthetic
package written here: which roots a sink's function has, and the bucket that gives."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bench.census._catalogue import load_sinks
from bench.census._coverage import Bucket, attribute, package_files, read_package
from bench.census._scope import Root, Scope
from inventory import CallSite, Framework, Inventory, Location, Pattern

FILES = {
    "shop/__init__.py": "",
    "shop/mail.py": """
        import requests
        from django.core.mail import send_mail

        def deliver(to):
            send_mail("s", "b", None, [to])

        def ping_partner():
            requests.post("https://partner.example/ping")

        def _legacy_export():
            requests.get("https://old.example/export")

        def send_to_slack(text):
            requests.post("https://hooks.example/slack", json={"text": text})

        def notify(channel, text):
            getattr(__import__("shop.mail"), f"send_to_{channel}")(text)

        STATUS = requests.get("https://status.example/")
        """,
    "shop/tasks.py": """
        from celery import shared_task

        from shop.mail import deliver

        @shared_task
        def welcome(to):
            deliver(to)

        def refresh():
            ping_partner()
        """,
    "shop/jobs.py": """
        from shop.tasks import refresh

        def plan(queue):
            queue.enqueue(refresh)
        """,
    "shop/management/__init__.py": "",
    "shop/management/commands/__init__.py": "",
    "shop/management/commands/digest.py": """
        from django.core.management.base import BaseCommand

        from shop.mail import deliver

        class Command(BaseCommand):
            def handle(self, *args, **options):
                deliver("team@example.com")
        """,
    "shop/views.py": """
        from shop.tasks import welcome

        def signup(request):
            welcome.delay(request.POST["email"])
        """,
    "shop/hooks.py": """
        from shop.mail import notify

        def on_order(order):
            notify("slack", "new order")

        HOOKS = [on_order]
        """,
}


@pytest.fixture
def scope(tmp_path: Path) -> Scope:
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return read_package(tmp_path, package_files(tmp_path, None), load_sinks())[1]


def test_a_helper_of_a_task_and_of_a_command_is_offline(scope: Scope) -> None:
    # deliver: called by the Celery task (queued from the view) and the management command.
    assert scope.roots("shop.mail.deliver", 0) == {Root.QUEUED_TASK, Root.CLI}


def test_a_function_handed_to_a_queue_runs_in_its_worker(scope: Scope) -> None:
    # ping_partner <- refresh, which RQ's ``queue.enqueue(refresh)`` runs.
    assert scope.roots("shop.mail.ping_partner", 0) == {Root.QUEUED_TASK}


def test_a_private_function_nobody_names_is_unreferenced(scope: Scope) -> None:
    assert scope.roots("shop.mail._legacy_export", 0) == {Root.UNREFERENCED}


def test_a_name_built_for_getattr_mentions_every_function_it_can_be(scope: Scope) -> None:
    # send_to_slack <- notify (getattr f"send_to_{channel}") <- on_order, listed in HOOKS.
    assert scope.roots("shop.mail.send_to_slack", 0) == {Root.UNKNOWN}


def test_module_level_code_runs_at_import(scope: Scope) -> None:
    assert scope.roots("shop.mail", 20) == {Root.IMPORT_TIME}


def test_what_nothing_names_is_unreferenced_whatever_its_parameters(scope: Scope) -> None:
    # signup takes the request, but no URLconf of this package names it: the rule reads
    # names, not parameters (a URLconf naming it would make it unknown).
    assert scope.roots("shop.views.signup", 0) == {Root.UNREFERENCED}


def test_the_buckets_of_the_sinks(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    sinks, scope = read_package(tmp_path, package_files(tmp_path, None), load_sinks())
    site = CallSite(
        location=Location(path="shop/views.py", line=4),
        pattern=Pattern.DIRECT_CALL,
        job="shop.views.signup",
        enclosing_function="shop.views.signup",
        handler=Framework.DJANGO,
    )
    coverage = attribute(sinks, Inventory(root="/x", sites=[site], jobs=[]), scope)
    why = {s.function.rpartition(".")[2]: b for s, b in coverage.uncovered}
    assert why == {
        "deliver": Bucket.IN_QUEUED_TASK,
        "ping_partner": Bucket.IN_QUEUED_TASK,
        "_legacy_export": Bucket.UNREFERENCED,
        "send_to_slack": Bucket.NO_ENTRY_POINT,
        "mail": Bucket.IMPORT_TIME,
    }
    assert coverage.in_scope == 1
    assert coverage.in_scope_share == 0.0


def test_click_commands_and_main_guards_are_command_lines(tmp_path: Path) -> None:
    files = {
        "tool/__init__.py": "",
        "tool/cli.py": """
            import click
            import requests

            @click.group()
            def cli(): ...

            @cli.command()
            @click.argument("url")
            def fetch(url):
                download(url)

            def download(url):
                requests.get(url)

            def main():
                requests.post("https://example.com/hello")

            if __name__ == "__main__":
                main()
            """,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    scope = read_package(tmp_path, package_files(tmp_path, None), load_sinks())[1]
    assert scope.roots("tool.cli.download", 0) == {Root.CLI}
    assert scope.roots("tool.cli.main", 0) == {Root.CLI}


def test_methods_a_framework_may_call_are_unknown(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "",
        "app/forms.py": """
            import requests
            from django import forms

            class CaptchaField(forms.Field):
                def clean(self, value):
                    requests.post("https://captcha.example/verify")

                def _verify(self):
                    requests.post("https://captcha.example/verify")
            """,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    scope = read_package(tmp_path, package_files(tmp_path, None), load_sinks())[1]
    assert scope.roots("app.forms.CaptchaField.clean", 0) == {Root.UNKNOWN}
    assert scope.roots("app.forms.CaptchaField._verify", 0) == {Root.UNREFERENCED}
