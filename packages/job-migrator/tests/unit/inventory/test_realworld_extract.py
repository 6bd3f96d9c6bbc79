"""The extractor and walker findings of the real-world QA (tests/fixtures/realworld/), end to end.

Each test copies one reproduction into a temporary folder and runs the real
extractor and classifier on it (``inventory.scan``), then asserts what a user
sees: sites (pattern, job, handler), jobs and their verdicts, skipped files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from inventory import Idempotency, Inventory, scan

REALWORLD = Path(__file__).resolve().parents[2] / "fixtures" / "realworld"


def scan_fixture(tmp_path: Path, name: str) -> Inventory:
    source = REALWORLD / name
    if source.is_dir():
        shutil.copytree(source, tmp_path / "app")
    else:
        (tmp_path / "app").mkdir()
        shutil.copy(source, tmp_path / "app" / source.name)
    return scan(tmp_path / "app", use_cache=False, jobs=1)


def sites(inventory: Inventory) -> list[tuple[str, str, str | None]]:
    return sorted((s.pattern.value, s.job, s.handler) for s in inventory.sites)


def verdicts(inventory: Inventory) -> dict[str, Idempotency]:
    return {j.qualname: j.idempotency for j in inventory.jobs}


# --- 4. request handlers the scan did not recognise ---------------------------------------


def test_flask_appbuilder_expose_methods_are_flask_handlers(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "fab_expose_handler.py")
    job = "fab_expose_handler.AlertView.notify"
    assert sites(inventory) == [("direct_call", job, "flask")]
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


def test_a_route_decorator_applied_by_hand_registers_a_flask_handler(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "flask_add_url_rule.py")
    found = sorted((s.enclosing_function, s.handler) for s in inventory.sites)
    assert found == [
        ("flask_add_url_rule.forgot", "flask"),
        ("flask_add_url_rule.register", "flask"),
    ]
    assert verdicts(inventory) == {"flask_add_url_rule.send_reset": Idempotency.NON_IDEMPOTENT}


def test_django_admin_actions_and_save_model_are_handlers(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "django_admin_action.py")
    assert sites(inventory) == [
        ("direct_call", "django_admin_action.OrderAdmin.save_model", "django"),
        ("direct_call", "django_admin_action.notify_customers", "django"),
    ]
    assert set(verdicts(inventory).values()) == {Idempotency.NON_IDEMPOTENT}


def test_admin_actions_named_by_string_are_handlers_and_plain_methods_are_not(
    tmp_path: Path,
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "admin.py").write_text(
        "from django.contrib import admin\n"
        "from django.core.mail import send_mail\n\n"
        "class Base(admin.ModelAdmin):\n"
        "    pass\n\n"
        "class OrderAdmin(Base):\n"
        '    actions = ["resend"]\n\n'
        "    def resend(self, request, queryset):\n"
        '        send_mail("s", "b", "f@x", ["a@x"])\n\n'
        "    def helper(self):\n"
        '        send_mail("s", "b", "f@x", ["a@x"])\n',
        encoding="utf-8",
    )
    inventory = scan(tmp_path / "app", use_cache=False, jobs=1)
    assert sites(inventory) == [("direct_call", "admin.OrderAdmin.resend", "django")]


def test_return_types_type_the_adapter_and_the_rendered_message(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "adapter_return_type.py")
    send_mail = "adapter_return_type.DefaultAccountAdapter.send_mail"
    send_direct = "adapter_return_type.DefaultAccountAdapter.send_direct"
    assert sites(inventory) == [
        ("direct_call", send_direct, "django"),
        ("direct_call", send_mail, "django"),
        ("direct_call", send_mail, "django"),
    ]
    assert verdicts(inventory) == {
        send_mail: Idempotency.NON_IDEMPOTENT,
        send_direct: Idempotency.NON_IDEMPOTENT,
    }
    evidence = "\n".join(e.message for j in inventory.jobs for e in j.evidence)
    assert "django.core.mail.EmailMessage.send: sends an email" in evidence


def test_oscar_get_class_with_literal_arguments_is_a_static_import(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "oscar_get_class")
    job = "oscar.apps.checkout.mixins.OrderPlacementMixin.send_order_placed_email"
    assert sites(inventory) == [("direct_call", job, "django")]
    assert (
        inventory.sites[0].enclosing_function == "oscar.apps.checkout.views.PaymentDetailsView.post"
    )
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


# --- 10. files skipped ----------------------------------------------------------------------


def test_startproject_settings_are_scanned(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "generated_by_startproject.py")
    assert sites(inventory) == [("scheduler", "generated_by_startproject.purge_sessions", None)]
    assert inventory.errors == []


def test_python_312_generics_are_scanned(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "py312_syntax.py")
    assert sites(inventory) == [("thread", "py312_syntax.send_receipt", None)]
    assert inventory.errors == []


# --- 9. thread infrastructure is not a job --------------------------------------------------


def test_a_watchdog_timer_on_interrupt_main_is_not_a_site(tmp_path: Path) -> None:
    assert scan_fixture(tmp_path, "timer_watchdog_stdlib_target.py").sites == []


def test_a_thread_waited_on_through_the_event_it_sets_is_not_a_site(tmp_path: Path) -> None:
    assert scan_fixture(tmp_path, "thread_joined_via_event.py").sites == []


def test_a_service_loop_on_a_stop_event_is_not_a_site(tmp_path: Path) -> None:
    assert scan_fixture(tmp_path, "service_loop_thread.py").sites == []


def test_an_event_the_function_never_waits_on_keeps_the_thread_a_site(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "views.py").write_text(
        "import threading\n\n"
        "def work(done): ...\n\n"
        "def loop(): \n"
        "    while retries < 3:\n"
        "        time.sleep(1)\n\n"
        "def start(request):\n"
        "    done = threading.Event()\n"
        "    done.wait()\n"
        "    threading.Thread(target=work, args=(done,)).start()\n"
        "    threading.Thread(target=loop).start()\n",
        encoding="utf-8",
    )
    inventory = scan(tmp_path / "app", use_cache=False, jobs=1)
    assert sorted(s.job for s in inventory.sites) == ["views.loop", "views.work"]


# --- 8. background-work patterns the scan missed --------------------------------------------


def test_run_in_threadpool_and_anyio_to_thread_are_run_in_executor(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "starlette_threadpool_anyio.py")
    job = "starlette_threadpool_anyio.send_receipt"
    assert sites(inventory) == [("run_in_executor", job, "fastapi")] * 2
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


def test_greenlets_and_socketio_background_tasks_are_threads(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "gevent_spawn_in_handler.py")
    report, expire = "gevent_spawn_in_handler.send_report", "gevent_spawn_in_handler.expire"
    assert sites(inventory) == [
        ("thread", expire, "flask"),
        ("thread", report, "flask"),
        ("thread", report, "flask"),
    ]
    assert verdicts(inventory) == {
        report: Idempotency.NON_IDEMPOTENT,
        expire: Idempotency.IDEMPOTENT,
    }


def test_a_greenlet_joined_at_once_is_not_background(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "views.py").write_text(
        "import gevent\n\ndef work(): ...\n\n"
        "def view(request):\n"
        "    gevent.spawn(work).join()\n"
        "    g = gevent.spawn(work)\n"
        "    return g.get()\n",
        encoding="utf-8",
    )
    assert scan(tmp_path / "app", use_cache=False, jobs=1).sites == []


def test_flask_executor_submit_submit_stored_and_job_functions(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "flask_executor_submit.py")
    sms, job = "flask_executor_submit.send_sms", "flask_executor_submit.send_sms_job"
    assert sites(inventory) == [
        ("executor_submit", sms, "flask"),
        ("executor_submit", sms, "flask"),
        ("executor_submit", job, "flask"),
    ]
    assert set(verdicts(inventory).values()) == {Idempotency.NON_IDEMPOTENT}


def test_flask_apscheduler_task_decorator_and_add_job(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "flask_apscheduler_task.py")
    assert sites(inventory) == [
        ("scheduler", "flask_apscheduler_task.ping", None),
        ("scheduler", "flask_apscheduler_task.purge", None),
    ]
    assert verdicts(inventory) == {
        "flask_apscheduler_task.ping": Idempotency.NON_IDEMPOTENT,
        "flask_apscheduler_task.purge": Idempotency.IDEMPOTENT,
    }


def test_loop_call_later_and_call_soon_are_asyncio_tasks(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "loop_call_later.py")
    job = "loop_call_later.expire_cart"
    assert sites(inventory) == [("asyncio_task", job, "fastapi")] * 2
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


def test_a_signal_imported_from_another_module_is_connected(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "signal_from_other_module")
    assert sites(inventory) == [
        ("signal_receiver", "shop.handlers.notify", None),
        ("signal_receiver", "shop.handlers.send_invoice", None),
    ]
    assert set(verdicts(inventory).values()) == {Idempotency.NON_IDEMPOTENT}


def test_connect_in_a_loop_over_signals(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "signal_connect_in_loop.py")
    job = "signal_connect_in_loop.on_password_changed"
    assert sites(inventory) == [("signal_receiver", job, None)]
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


def test_a_db_connect_with_a_dsn_is_not_a_signal(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "db.py").write_text(
        "from django.conf import settings\nfrom psycopg import connect\n"
        "from shop.events import order_paid\n\n"
        "def dsn(): ...\n\n"
        "conn = connect(dsn())\n"
        "order_paid.connect(settings.HANDLER)\n",
        encoding="utf-8",
    )
    assert scan(tmp_path / "app", use_cache=False, jobs=1).sites == []


# --- 7. signals that are not request-path work ------------------------------------------------


def test_lifecycle_signal_receivers_are_not_sites(tmp_path: Path) -> None:
    assert scan_fixture(tmp_path, "signal_setting_changed_migrate.py").sites == []


def test_celery_signals_are_not_django_signals(tmp_path: Path) -> None:
    assert scan_fixture(tmp_path, "celery_signals_not_django.py").sites == []


# --- 5. wrong job resolution ------------------------------------------------------------------


def test_a_folder_without_init_inside_a_package_is_part_of_it(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "namespace_subpackage")
    job = "app.helpers.audit.create_audit_log"
    assert sites(inventory) == [("asyncio_task", job, "fastapi")]
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


def test_the_type_checking_branch_wins_over_its_any_fallback(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "type_checking_else_any.py")
    assert sites(inventory) == [
        ("asyncio_task", "type_checking_else_any.UsageCache.async_batch_set_cache", None)
    ]
    assert "typing.Any" not in (inventory.sites[0].unresolved_reason or "")


def test_a_foreign_key_attribute_is_an_instance_of_the_related_model(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "fk_attribute_type.py")
    (job,) = inventory.jobs
    messages = "\n".join(e.message for e in job.evidence)
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert "fk_attribute_type.Audit.objects.create: inserts a row" in messages
    assert "ForeignKey" not in messages


def test_a_greenlet_or_thread_running_a_server_wrapper_is_infrastructure(tmp_path: Path) -> None:
    # locust web.py: gevent.spawn(self.start_server), start_server calls serve_forever().
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "web.py").write_text(
        "import threading\n\nimport gevent\n\n"
        "class WebUI:\n"
        "    def start(self):\n"
        "        gevent.spawn(self.start_server)\n"
        "        gevent.spawn(self.server.serve_forever)\n"
        "        threading.Thread(target=self.start_server).start()\n\n"
        "    def start_server(self):\n"
        "        self.server.serve_forever()\n",
        encoding="utf-8",
    )
    assert scan(tmp_path / "app", use_cache=False, jobs=1).sites == []


def test_a_return_annotation_types_the_call_in_another_module(tmp_path: Path) -> None:
    # allauth: flows/signup.py calls get_adapter(request).send_mail(...), get_adapter is
    # annotated -> DefaultAccountAdapter in account/adapter.py.
    files = {
        "acct/__init__.py": "",
        "acct/adapter.py": (
            "from django.core.mail import EmailMessage\n\n"
            "class DefaultAccountAdapter:\n"
            "    def render_mail(self, subject, email):\n"
            "        msg = EmailMessage(subject, 'body', to=[email])\n"
            "        return msg\n\n"
            "    def send_mail(self, subject, email):\n"
            "        msg = self.render_mail(subject, email)\n"
            "        msg.send()\n\n"
            "def get_adapter(request=None) -> DefaultAccountAdapter:\n"
            "    return import_string('x')(request)\n"
        ),
        "acct/views.py": (
            "from django.views.decorators.http import require_POST\n\n"
            "from acct.adapter import get_adapter\n\n"
            "@require_POST\n"
            "def password_reset(request):\n"
            "    get_adapter(request).send_mail('Reset', request.POST['email'])\n"
        ),
    }
    for rel, text in files.items():
        (tmp_path / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "app" / rel).write_text(text, encoding="utf-8")
    inventory = scan(tmp_path / "app", use_cache=False, jobs=1)
    job = "acct.adapter.DefaultAccountAdapter.send_mail"
    assert sites(inventory) == [("direct_call", job, "django")]
    assert verdicts(inventory) == {job: Idempotency.NON_IDEMPOTENT}


def test_library_classes_of_one_module_returned_in_branches_type_the_result(
    tmp_path: Path,
) -> None:
    # allauth render_mail: EmailMultiAlternatives in one branch, EmailMessage in the other.
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "views.py").write_text(
        "from django.core.mail import EmailMessage, EmailMultiAlternatives\n\n"
        "class Mailer:\n"
        "    def render(self, html):\n"
        "        if html:\n"
        "            msg = EmailMultiAlternatives('s', 'b')\n"
        "        else:\n"
        "            msg = EmailMessage('s', 'b')\n"
        "        return msg\n\n"
        "class Other:\n"
        "    pass\n\n"
        "class Ours:\n"
        "    pass\n\n"
        "def pick(x):\n"
        "    if x:\n"
        "        return Other()\n"
        "    return Ours()\n\n"
        "def index(request):\n"
        "    Mailer().render(True).send()\n"
        "    pick(1).run()\n",
        encoding="utf-8",
    )
    inventory = scan(tmp_path / "app", use_cache=False, jobs=1)
    (job,) = inventory.jobs
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert "EmailMultiAlternatives.send: sends an email" in "\n".join(
        e.message for e in job.evidence
    )
    from inventory._extract import extract_source

    summary = extract_source((tmp_path / "app" / "views.py").read_text(), "views.py", "views")
    assert "pick()" not in summary.assignments  # two classes of this file: no type
