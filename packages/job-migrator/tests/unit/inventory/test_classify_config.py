"""[tool.migrator] in the scanned project's pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.config import MigratorConfig, ScanConfigError
from inventory.models import EffectKind, Idempotency

PYPROJECT = """
[project]
name = "shop"

[tool.migrator]
exclude = ["migrations/*"]
max_file_size = 2000

[[tool.migrator.catalogue.effect]]
call = "acme.Gateway.charge"
effect = "payment"
keyed_by = "request_key"

[tool.migrator.jobs."shop.tasks.rebuild"]
idempotency = "idempotent"
reason = "rebuilds the index from scratch"

[tool.migrator.jobs."shop.tasks.welcome"]
key = "welcome:{user_id}"
"""


def test_reads_every_section() -> None:
    config = MigratorConfig.from_toml(PYPROJECT)
    assert config.exclude == ["migrations/*"] and config.max_file_size == 2000
    assert config.catalogue.effect[0].effect == EffectKind.PAYMENT
    assert config.jobs["shop.tasks.rebuild"].idempotency == Idempotency.IDEMPOTENT
    assert config.jobs["shop.tasks.welcome"].key == "welcome:{user_id}"


def test_absent_table_and_absent_file_give_defaults(tmp_path: Path) -> None:
    assert MigratorConfig.from_toml("[project]\nname = 'x'\n") == MigratorConfig()
    assert MigratorConfig.from_project(tmp_path) == MigratorConfig()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    assert MigratorConfig.from_project(tmp_path).max_file_size == 2000


@pytest.mark.parametrize(
    "bad",
    [
        '[tool.migrator.jobs."a.b"]\nidempotency = "idempotent"\n',  # a pin without a reason
        '[tool.migrator.jobs."a.b"]\nidempotency = "fine"\nreason = "x"\n',
        "[tool.migrator]\nmax_file_size = 0\n",
        "[tool.migrator]\nunknown_option = 1\n",
        "[tool.migrator\n",
    ],
)
def test_invalid_configuration_is_one_clear_error(bad: str) -> None:
    with pytest.raises(ScanConfigError, match=r"\[tool.migrator\]"):
        MigratorConfig.from_toml(bad)


def test_a_broken_regex_in_a_catalogue_addition_is_a_config_error() -> None:
    bad = '[[tool.migrator.catalogue.effect]]\ncall = "?.send"\neffect = "email_send"\nreceiver = "(smtp"\n'
    with pytest.raises(ScanConfigError, match="invalid regular expression"):
        MigratorConfig.from_toml(bad)


def test_the_plan_table_of_migrator_plan_does_not_break_the_scan_config() -> None:
    config = MigratorConfig.from_toml(
        '[tool.migrator.plan]\nmetrics_url = "http://worker:9108/metrics"\n'
    )
    assert config.plan == {"metrics_url": "http://worker:9108/metrics"}


def test_a_like_naming_no_entry_is_a_config_error() -> None:
    bad = '[[tool.migrator.catalogue.effect]]\ncall = "archives.open_archive"\nlike = "opne"\n'
    with pytest.raises(ScanConfigError, match="like = 'opne' names no entry"):
        MigratorConfig.from_toml(bad)


def test_a_user_entry_takes_a_shipped_entrys_rules_with_like(tmp_path: Path) -> None:
    """``like = "open"``: the in-house opener is judged by its mode as ``open`` is."""
    from inventory import scan

    (tmp_path / "pyproject.toml").write_text(
        '[[tool.migrator.catalogue.effect]]\ncall = "vault.open_file"\nlike = "open"\n'
        '[[tool.migrator.catalogue.pure]]\ncall = "vault.open_file"\nlike = "open"\n'
    )
    (tmp_path / "jobs.py").write_text(
        "import threading\n\nimport vault\n\n\n"
        "def append(path):\n    vault.open_file(path, 'a')\n\n\n"
        "def read(path):\n    vault.open_file(path)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=append, args=('x',)).start()\n"
        "    threading.Thread(target=read, args=('x',)).start()\n"
    )
    jobs = {j.qualname: j for j in scan(tmp_path, use_cache=False, jobs=1).jobs}
    assert {e.kind for e in jobs["jobs.append"].effects} == {EffectKind.FILE_APPEND}
    assert jobs["jobs.read"].idempotency is Idempotency.IDEMPOTENT
    assert not jobs["jobs.read"].unexplained
