"""The checks that need no server: configuration, files, and the failures that become evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.models import Idempotency
from migrator.errors import MigratorConfigError
from migrator.plan import ItemState, build_plan, check, load_check_settings, load_plan_config
from migrator.plan.check import check_metrics, check_pools, check_retry, check_runbooks
from tests.unit.migrator.plan_builders import inventory, make_job, make_site


def project(tmp_path: Path, toml: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(toml)
    return tmp_path


def test_pools_need_an_explicit_pool_for_every_moving_job(tmp_path: Path) -> None:
    bare = load_check_settings(project(tmp_path, "[tool.queue_runtime]\n"), env={})
    ok, why = check_pools(bare, ["app.a"])
    assert not ok and "app.a" in why and "default_pool" in why
    per_job = load_check_settings(
        project(
            tmp_path,
            "[tool.queue_runtime.pools.mail]\n[tool.queue_runtime.pools.batch]\n"
            '[tool.queue_runtime.jobs."app.a"]\npool = "mail"\n',
        ),
        env={},
    )
    assert check_pools(per_job, ["app.a"]) == (True, "1 job(s) -> mail")
    assert not check_pools(per_job, ["app.a", "app.b"])[0]
    default = load_check_settings(
        project(tmp_path, '[tool.queue_runtime]\ndefault_pool = "batch"\n'), env={}
    )
    assert check_pools(default, ["app.a", "app.b"]) == (True, "2 job(s) -> batch")
    assert check_pools(bare, [])[0]  # nothing moves yet


def test_retry_policy_with_a_single_attempt_fails(tmp_path: Path) -> None:
    single = load_check_settings(
        project(tmp_path, "[tool.queue_runtime.retry]\nmax_attempts = 1\n"), env={}
    )
    ok, why = check_retry(single)
    assert not ok and "never retries" in why
    default = load_check_settings(project(tmp_path, ""), env={})
    ok, why = check_retry(default)
    assert ok and "built-in default" in why


def test_runbooks_in_the_project_or_linked(tmp_path: Path) -> None:
    settings = load_check_settings(project(tmp_path, ""), env={})
    assert not check_runbooks(settings)[0]
    (tmp_path / "docs" / "runbooks").mkdir(parents=True)
    (tmp_path / "docs" / "runbooks" / "backlog.md").write_text("# backlog\n")
    assert check_runbooks(settings) == (True, "docs/runbooks/backlog.md")
    linked = load_check_settings(
        project(
            tmp_path, '[tool.migrator.plan]\nrunbooks = ["https://wiki/x", "ops/missing.md"]\n'
        ),
        env={},
    )
    ok, why = check_runbooks(linked)
    assert not ok and "ops/missing.md" in why


def test_metrics_without_a_url_or_an_answer_is_unticked(tmp_path: Path) -> None:
    settings = load_check_settings(project(tmp_path, ""), env={})
    ok, why = check_metrics(settings)
    assert not ok and "metrics_url" in why
    dead = settings.model_copy(update={"metrics_url": "http://127.0.0.1:1/metrics"})
    ok, why = check_metrics(dead)
    assert not ok and "did not answer" in why


def test_check_turns_unreachable_servers_into_unticked_evidence(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        '[tool.queue_runtime]\ndatabase_url = "postgresql://nobody@127.0.0.1:1/x"\n'
        'redis_url = "redis://127.0.0.1:1/0"\ndefault_pool = "batch"\n',
    )
    settings = load_check_settings(root, env={}).model_copy(update={"timeout": 1.0})
    plan = build_plan(
        inventory([make_job("app.a", Idempotency.IDEMPOTENT)], [make_site("app.a", 1)])
    )
    checked = check(plan, settings)
    states = {i.id: i.state for i in checked.prerequisites()}
    for item in ("prereq/schema", "prereq/dlq", "prereq/leases", "prereq/metrics"):
        assert states[item] is ItemState.UNTICKED, item
    assert states["prereq/pools"] is ItemState.TICKED
    assert all(i.verified and i.evidence.startswith("checked ") for i in checked.prerequisites())
    assert not checked.prerequisites_pass


def test_no_database_url_is_said_plainly(tmp_path: Path) -> None:
    settings = load_check_settings(project(tmp_path, ""), env={})
    checked = check(build_plan(inventory([], [])), settings)
    schema = checked.item("prereq/schema")
    assert schema is not None and "no database URL" in schema.evidence


def test_overrides_and_environment_win_over_the_table(tmp_path: Path) -> None:
    root = project(tmp_path, '[tool.queue_runtime]\ndatabase-url = "postgresql://a/a"\n')
    assert load_check_settings(root, env={}).runtime.database_url == "postgresql://a/a"
    env = {"QUEUE_RUNTIME_DATABASE_URL": "postgresql://b/b"}
    assert load_check_settings(root, env=env).runtime.database_url == "postgresql://b/b"
    settings = load_check_settings(root, env=env, database_url="postgresql://c/c")
    assert settings.runtime.database_url == "postgresql://c/c"


def test_invalid_configuration_is_a_configuration_error(tmp_path: Path) -> None:
    root = project(tmp_path, '[tool.queue_runtime]\ndefault_pool = "nope"\n')
    with pytest.raises(MigratorConfigError):
        load_check_settings(root, env={})
    assert load_plan_config(project(tmp_path, "")).keys == {}
    keyed = project(tmp_path, '[tool.migrator.jobs."a.b"]\nkey = "b-{id}"\n')
    assert load_plan_config(keyed).keys == {"a.b": "b-{id}"}
