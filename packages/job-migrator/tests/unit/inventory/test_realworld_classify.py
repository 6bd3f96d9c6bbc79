"""The classifier findings of the real-world QA (tests/fixtures/realworld/), end to end.

Each test copies one reproduction into a temporary folder and runs the real
extractor and classifier on it (``inventory.scan``), then asserts what a user
sees: sites, jobs, verdicts, evidence.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, Pattern, scan
from inventory._classify._index import Resolved, SymbolIndex
from inventory.models import Confidence, EffectKind, Job

REALWORLD = Path(__file__).resolve().parents[2] / "fixtures" / "realworld"


def scan_fixture(tmp_path: Path, name: str) -> Inventory:
    source = REALWORLD / name
    if source.is_dir():
        shutil.copytree(source, tmp_path / "app")
    else:
        (tmp_path / "app").mkdir()
        shutil.copy(source, tmp_path / "app" / source.name)
    return scan(tmp_path / "app", use_cache=False, jobs=1)


def scan_files(tmp_path: Path, files: dict[str, str]) -> Inventory:
    for rel, text in files.items():
        (tmp_path / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "app" / rel).write_text(text, encoding="utf-8")
    return scan(tmp_path / "app", use_cache=False, jobs=1)


def job(inventory: Inventory, suffix: str) -> Job:
    found = [j for j in inventory.jobs if j.qualname.endswith(suffix)]
    assert len(found) == 1, [j.qualname for j in inventory.jobs]
    return found[0]


def messages(inventory: Inventory, suffix: str) -> str:
    return "\n".join(e.message for e in job(inventory, suffix).evidence)


# --- 1. star-import cliques must not hang the scan (litellm) -----------------------------


def test_star_import_blowup_fixture_resolves_quickly(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "star_import_blowup")
    [site] = inventory.sites
    assert site.pattern == Pattern.THREAD
    assert site.job == "unknown"
    assert "pkg.m0.send_report could not be resolved" in site.unresolved_reason


def _clique(size: int) -> dict[str, str]:
    files = {"pkg/__init__.py": ""}
    for i in range(size):
        stars = "".join(f"from .m{j} import *\n" for j in range(size) if j != i)
        files[f"pkg/m{i}.py"] = stars + f"\n\ndef helper_{i}():\n    return {i}\n"
    files["pkg/m0.py"] = (
        "import threading\n"
        + files["pkg/m0.py"]
        + "\n\ndef start():\n"
        + "    threading.Thread(target=send_report).start()\n"
        + "    threading.Thread(target=helper_7).start()\n"
    )
    return files


@pytest.mark.timeout(20)
def test_a_generated_star_import_clique_of_14_modules_scans_in_time(tmp_path: Path) -> None:
    # 10 modules took 15 s before (factorial in the clique size); 14 would take days.
    inventory = scan_files(tmp_path, _clique(14))
    assert sorted(s.job for s in inventory.sites) == ["pkg.m7.helper_7", "unknown"]


def test_star_import_resolution_steps_are_bounded(tmp_path: Path) -> None:
    from inventory._extract import extract_source

    files = _clique(14)
    summaries = [
        extract_source(
            text,
            rel,
            rel.removesuffix(".py").removesuffix("/__init__").replace("/", "."),
            rel.endswith("__init__.py"),
        )
        for rel, text in files.items()
    ]
    index = SymbolIndex(summaries)
    steps = 0
    inner = index._resolve

    def counted(name: str) -> Resolved:
        nonlocal steps
        steps += 1
        return inner(name)

    index._resolve = counted  # type: ignore[method-assign]
    for i in range(14):
        assert index.resolve(f"pkg.m{i}.missing_name").kind == "missing"
        assert index.resolve(f"pkg.m{i}.helper_{(i + 3) % 14}").name.endswith(
            f"helper_{(i + 3) % 14}"
        )
    assert steps < 200


# --- 2. jobs wrongly called idempotent ---------------------------------------------------


def test_sql_passed_to_a_helper_that_executes_its_parameter(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "raw_sql_through_helper.py")
    audit = job(inventory, ".audit_login")
    assert audit.idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.kind for e in audit.effects] == [EffectKind.DB_INSERT]
    assert "run_sql(INSERT INTO audit_log" in messages(inventory, ".audit_login")


def test_execute_of_a_parameter_alone_is_unknown_not_a_read(tmp_path: Path) -> None:
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/jobs.py": """\
import threading

from django.db import connection


def run_sql(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def view(request):
    threading.Thread(target=run_sql, args=(request.GET["q"],)).start()
""",
        },
    )
    run_sql = job(inventory, ".run_sql")
    assert run_sql.idempotency == Idempotency.UNKNOWN
    assert "SQL text comes from parameter 'sql'" in run_sql.effects[0].detail


def test_a_select_passed_to_the_helper_is_a_read(tmp_path: Path) -> None:
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/jobs.py": """\
import threading

from django.db import connection


def run_sql(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def report(user_id):
    run_sql("SELECT * FROM audit_log WHERE user_id = %s", [user_id])


def view(request):
    threading.Thread(target=report, args=(request.user.id,)).start()
""",
        },
    )
    report = job(inventory, ".report")
    assert report.idempotency == Idempotency.IDEMPOTENT
    assert [e.kind for e in report.effects] == [EffectKind.DB_READ]


def test_save_on_a_new_instance_is_an_insert(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "new_instance_save_is_insert.py")
    add = job(inventory, ".add_comment")
    assert add.idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.kind for e in add.effects] == [EffectKind.DB_INSERT]
    assert "comment.save() on a new Comment(...) without a primary key" in add.effects[0].detail
    page = job(inventory, ".make_page")
    assert page.idempotency == Idempotency.NON_IDEMPOTENT
    assert "Page(...).save: inserts a row" in messages(inventory, ".make_page")


def test_save_on_an_instance_built_with_its_pk_stays_an_overwrite(tmp_path: Path) -> None:
    # django-cms cms/signals/permissions.py:48: PageUserGroup(group_ptr_id=instance.pk, ...)
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/models.py": """\
from django.db import models
from django.db.models.signals import post_save


class PageUserGroup(models.Model):
    name = models.CharField(max_length=10)


def sync_group(sender, instance, **kwargs):
    group = PageUserGroup(group_ptr_id=instance.pk, name=instance.name)
    group.save()


post_save.connect(sync_group, sender="auth.Group")
""",
        },
    )
    sync = job(inventory, ".sync_group")
    assert sync.idempotency == Idempotency.IDEMPOTENT
    assert [e.kind for e in sync.effects] == [EffectKind.DB_OVERWRITE]


def test_receiver_instance_is_typed_from_the_sender(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "receiver_instance_method_dropped.py")
    unpublish = job(inventory, ".unpublish_on_delete")
    assert unpublish.idempotency == Idempotency.NON_IDEMPOTENT
    assert unpublish.effects[0].chain[-1].endswith("Page.unpublish")


def test_an_unresolved_project_method_is_a_gap_and_alone_it_is_unknown(tmp_path: Path) -> None:
    source = (REALWORLD / "receiver_instance_method_dropped.py").read_text(encoding="utf-8")
    inventory = scan_files(tmp_path, {"app/signals.py": source.replace(", sender=Page)", ")")})
    unpublish = job(inventory, ".unpublish_on_delete")
    assert (unpublish.idempotency, unpublish.confidence) == (Idempotency.UNKNOWN, Confidence.LOW)
    text = messages(inventory, ".unpublish_on_delete")
    assert "instance.unpublish" in text and "no effect found, but calls could not be" in text


def test_a_stored_callable_is_a_dynamic_call(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "stored_callable_call.py")
    run_stored = job(inventory, ".run_stored")
    assert (run_stored.idempotency, run_stored.confidence) == (
        Idempotency.UNKNOWN,
        Confidence.LOW,
    )
    assert "calls the callable stored in job.func" in run_stored.effects[0].detail


def test_a_custom_manager_method_is_followed(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "custom_manager_method.py")
    login = job(inventory, ".on_login")
    assert login.idempotency != Idempotency.IDEMPOTENT
    [insert] = login.effects
    assert insert.kind == EffectKind.DB_INSERT
    assert insert.chain[-1].endswith("SessionManager.create_from_request")


def test_logentry_log_action_inserts(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "catalogue_logentry_log_action.py")
    assert job(inventory, ".log_operation").idempotency == Idempotency.NON_IDEMPOTENT
    assert "LogEntry.objects.log_action: inserts a row" in messages(inventory, ".log_operation")
    assert job(inventory, ".record_direct").idempotency == Idempotency.NON_IDEMPOTENT


def test_spend_on_a_model_is_account_state(tmp_path: Path) -> None:
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/jobs.py": """\
import threading


def add_spend(team, cost):
    team.spend += cost
    team.save()


def view(request):
    threading.Thread(target=add_spend, args=(request.team, 1)).start()
""",
        },
    )
    assert job(inventory, ".add_spend").idempotency == Idempotency.UNSAFE


# --- 6. verdict noise and rule order ------------------------------------------------------


def test_a_timestamp_overwrite_is_idempotent(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "timestamp_overwrite.py")
    assert job(inventory, ".touch").idempotency == Idempotency.IDEMPOTENT
    assert job(inventory, ".touch2").idempotency == Idempotency.IDEMPOTENT
    [now] = [e for e in job(inventory, ".touch").effects if e.kind == EffectKind.RANDOM_ID]
    assert "converges" in now.detail


def test_a_time_value_naming_a_new_file_still_repeats(tmp_path: Path) -> None:
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/jobs.py": """\
import threading
import time


def export(rows):
    with open(f"/tmp/export-{time.time()}.csv", "w") as out:
        out.write(str(rows))


def view(request):
    threading.Thread(target=export, args=(request.GET,)).start()
""",
        },
    )
    assert job(inventory, ".export").idempotency == Idempotency.NON_IDEMPOTENT


def test_a_known_insert_wins_over_a_dynamic_call(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "known_insert_hidden_by_dynamic.py")
    visit = job(inventory, ".record_visit")
    assert (visit.idempotency, visit.confidence) == (Idempotency.NON_IDEMPOTENT, Confidence.LOW)
    assert {e.kind for e in visit.effects} == {EffectKind.DB_INSERT, EffectKind.DYNAMIC_CALL}
    assert "effects hidden behind hook(instance)" in visit.evidence[-1].message


def test_namedtuple_and_cls_calls_are_not_dynamic(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "constructor_calls_not_dynamic.py")
    roots = job(inventory, ".refresh_roots")
    assert (roots.idempotency, roots.confidence) == (Idempotency.IDEMPOTENT, Confidence.HIGH)
    index = job(inventory, ".Reference.index_object")
    assert index.idempotency == Idempotency.NON_IDEMPOTENT
    assert EffectKind.DYNAMIC_CALL not in {e.kind for e in index.effects}


# --- 3. no direct_call for work a helper only starts in the background --------------------


def test_no_direct_call_through_a_site_edge(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "direct_call_through_site_edge.py")
    assert [(s.pattern, s.job.rsplit(".", 1)[-1]) for s in inventory.sites] == [
        (Pattern.BACKGROUND_TASKS, "send_welcome")
    ]


# --- 7. connecting a receiver runs nothing -------------------------------------------------


def test_connect_does_not_inherit_the_receivers_effects(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "connect_is_not_a_call.py")
    enable = job(inventory, ".enable_indexing")
    assert enable.idempotency == Idempotency.IDEMPOTENT
    assert enable.effects == []
    assert job(inventory, ".index_on_save").idempotency == Idempotency.NON_IDEMPOTENT


# --- 11. evidence a reviewer can act on ----------------------------------------------------


def test_on_commit_reasons_name_the_call_and_the_signal_receivers(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "on_commit_lambda_unresolved.py")
    reasons = [s.unresolved_reason for s in inventory.sites if s.pattern == Pattern.ON_COMMIT]
    assert reasons == [
        "sends slug_changed: its receivers run here "
        "(on_commit_lambda_unresolved.on_slug_changed, each a job of its own)",
        "instance.file.delete: a method of an object whose type is not known here, "
        "so its work is not analysed",
    ]
    assert not any("?." in s.unresolved_reason for s in inventory.sites)


def test_a_comprehension_variable_is_no_missing_project_name(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "comprehension_variable_gap.py")
    purge = job(inventory, ".purge_urls")
    # Soundness rule (issue 10): backend.accepts() on a receiver of unknown type is a call
    # nothing explains, so the job is no longer `idempotent` (it was, with requests.get
    # its only effect); the gap is named as written, never as a missing project name.
    assert purge.idempotency == Idempotency.UNKNOWN
    assert "calls not found" not in messages(inventory, ".purge_urls")
    assert "backend.accepts" in messages(inventory, ".purge_urls")
    assert "comprehension_variable_gap.backend" not in messages(inventory, ".purge_urls")


def test_a_closure_job_says_a_worker_cannot_import_it(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "closure_job_captures.py")
    closure = job(inventory, ".track_cost.<locals>._update_team_db")
    assert "defined inside closure_job_captures.track_cost: a worker cannot import" in (
        closure.evidence[-2].message
    )


def test_a_module_level_logger_is_no_missing_project_name(tmp_path: Path) -> None:
    # litellm: verbose_logger = logging.getLogger("LiteLLM") in litellm/_logging.py, imported
    # everywhere; the jobs that only log were "unknown: calls could not be followed".
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/_logging.py": 'import logging\n\nverbose_logger = logging.getLogger("app")\n',
            "app/jobs.py": """\
import threading

from app._logging import verbose_logger
from app.models import Missing


def flush(batch):
    verbose_logger.debug("flushing %s", batch)


def sync(batch):
    Missing.sync_all(batch)


def view(request):
    threading.Thread(target=flush, args=(request.GET,)).start()
    threading.Thread(target=sync, args=(request.GET,)).start()
""",
        },
    )
    flush = job(inventory, ".flush")
    assert (flush.idempotency, flush.confidence) == (Idempotency.IDEMPOTENT, Confidence.MEDIUM)
    sync = job(inventory, ".sync")
    assert sync.idempotency == Idempotency.UNKNOWN
    assert "app.models.Missing.sync_all" in messages(inventory, ".sync")


def test_datetime_decimal_uuid_arguments_say_what_they_need(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "argument_serialisable_unknowns.py")
    first = inventory.sites[0].arguments
    reasons = {a.source: a.reason for a in first}
    assert reasons["datetime.now()"].startswith("a datetime: stored as JSON only if")
    assert reasons['Decimal("1.5")'].startswith("a Decimal: ")
    assert reasons["UUID(int=1)"].startswith("a UUID: ")
    assert [a.serialisable for a in first[1:4]] == [None, None, None]  # depends on annotations


def test_receiver_decorator_sender_types_the_instance_too(tmp_path: Path) -> None:
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/models.py": """\
from django.db import models


class LogEntry(models.Model):
    action = models.CharField(max_length=50)


class Page(models.Model):
    def unpublish(self):
        LogEntry.objects.create(action="unpublish")
""",
            "app/signals.py": """\
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from app.models import Page


@receiver(pre_delete, sender=Page)
def unpublish_on_delete(sender, instance, **kwargs):
    instance.unpublish()
""",
        },
    )
    unpublish = job(inventory, ".unpublish_on_delete")
    assert unpublish.idempotency == Idempotency.NON_IDEMPOTENT
    assert unpublish.effects[0].chain[-1] == "app.models.Page.unpublish"


def test_save_on_a_new_non_model_object_is_not_an_insert(tmp_path: Path) -> None:
    inventory = scan_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/jobs.py": """\
import threading

from django.contrib.auth.models import User
from shelf import Store


def remember(name):
    prefs = Store(name=name)
    prefs.save()


def register(name):
    user = User(username=name)
    user.save()


def view(request):
    threading.Thread(target=remember, args=(request.GET,)).start()
    threading.Thread(target=register, args=(request.GET,)).start()
""",
        },
    )
    # Not an insert (no model); since issue 10's soundness rule, shelf.Store, a library class
    # whose source the scan did not read, is a gap: `unknown`, not `idempotent`.
    remember = job(inventory, ".remember")
    assert remember.idempotency == Idempotency.UNKNOWN
    assert EffectKind.DB_INSERT not in {e.kind for e in remember.effects}
    register = job(inventory, ".register")
    assert register.idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.kind for e in register.effects] == [EffectKind.DB_INSERT]
