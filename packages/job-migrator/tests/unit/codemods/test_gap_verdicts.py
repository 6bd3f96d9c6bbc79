"""`migrator apply` never moves a job whose verdict rests on a gap (issue 10, soundness rule).

Scanned for real (not a hand-made inventory): a job that calls a library the
environment does not have is `unknown`, so it stays put; its neighbour, whose
every call is explained, is `idempotent` and moves.
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from codemods import ApplyOptions, SiteOutcome, Status, plan_apply
from inventory import Idempotency, scan
from migrator.cli.apply import apply

APP = (
    "import json\nimport threading\n\nimport not_installed_telemetry\n\n\n"
    "def report(data):\n    not_installed_telemetry.send(json.dumps(data))\n\n\n"
    "def tidy(name):\n    return len(name.strip())\n\n\n"
    "def view(request):\n"
    "    threading.Thread(target=report, args=(request.user.id,)).start()\n"
    "    threading.Thread(target=tidy, args=(request.user.id,)).start()\n"
)


def test_a_job_resting_on_an_unresolved_call_is_not_moved(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    assert {j.qualname: j.idempotency for j in inventory.jobs} == {
        "app.report": Idempotency.UNKNOWN,
        "app.tidy": Idempotency.IDEMPOTENT,
    }
    result = CliRunner().invoke(apply, [str(tmp_path)], env={"COLUMNS": "250"})
    assert "app.report" in result.output, result.output
    assert "job idempotency is unknown" in result.output
    assert "tidy.options(inline=InlineShape.THREAD).enqueue(" in result.output
    assert "report.enqueue(" not in result.output and "report.options(" not in result.output


# --- the refusal names what the scan could not follow, and following it moves the site ----

FOLLOWED = (
    "import threading\n\nimport not_installed_telemetry\n\n\n"
    "def refresh(user_id, profile):\n"
    "    profile.rebuild_badges(user_id)\n\n\n"
    "def report(data):\n    not_installed_telemetry.send(data)\n\n\n"
    "def view(request):\n"
    "    threading.Thread(target=refresh, args=(request.user.id, request.user)).start()\n"
    "    threading.Thread(target=report, args=(request.user.id,)).start()\n"
)


def _outcomes(root: Path) -> dict[str, SiteOutcome]:
    inventory = scan(root, use_cache=False, jobs=1)
    return {o.site.job: o for o in plan_apply(root, inventory, scanner=None).outcomes}


def _entry(reason: str, call: str) -> str:
    """The keys the reason gives for ``call``, as TOML lines."""
    found = re.search(
        re.escape(f"`{call}` (") + r"""(call = "[^"]+"(?:, receiver = '[^']+')?)\)""", reason
    )
    assert found, reason
    return found.group(1).replace(", receiver", "\nreceiver")


def test_an_unknown_verdicts_reason_names_the_call_and_the_entry_that_moves_the_site(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(FOLLOWED, encoding="utf-8")
    before = _outcomes(tmp_path)
    refresh, report = before["app.refresh"], before["app.report"]
    assert refresh.status is Status.SKIPPED and report.status is Status.SKIPPED
    # a method of a receiver of unknown type: by method name, kept to that receiver
    badges = _entry(refresh.reason, "profile.rebuild_badges")
    assert badges == "call = \"?.rebuild_badges\"\nreceiver = '^profile$'"
    # a library the environment lacks: the call's dotted name
    send = _entry(report.reason, "not_installed_telemetry.send")
    assert send == 'call = "not_installed_telemetry.send"'
    for reason in (refresh.reason, report.reason):
        assert "classify it" not in reason
        assert "pin the verdict after review" in reason

    # Follow the reasons as written: rebuilding badges repeats nothing a retry could
    # double; the telemetry send is a PUT of the same document (idempotent by HTTP).
    (tmp_path / "pyproject.toml").write_text(
        f"[[tool.migrator.catalogue.pure]]\n{badges}\n\n"
        f'[[tool.migrator.catalogue.effect]]\n{send}\neffect = "http_put"\n',
        encoding="utf-8",
    )
    after = _outcomes(tmp_path)
    assert after["app.refresh"].status is Status.REWRITTEN, after["app.refresh"].reason
    assert after["app.report"].status is Status.REWRITTEN, after["app.report"].reason


def test_the_entry_an_unknown_verdict_suggests_explains_no_other_receiver(tmp_path: Path) -> None:
    # The same method name on another object is not what the user vouched for.
    (tmp_path / "app.py").write_text(
        FOLLOWED + "\n\ndef award(team):\n    team.rebuild_badges(1)\n\n\n"
        "def team_view(request):\n"
        "    threading.Thread(target=award, args=(request.team,)).start()\n",
        encoding="utf-8",
    )
    badges = _entry(_outcomes(tmp_path)["app.refresh"].reason, "profile.rebuild_badges")
    (tmp_path / "pyproject.toml").write_text(
        f"[[tool.migrator.catalogue.pure]]\n{badges}\n", encoding="utf-8"
    )
    after = _outcomes(tmp_path)
    assert after["app.refresh"].status is Status.REWRITTEN, after["app.refresh"].reason
    assert after["app.award"].status is Status.SKIPPED
    assert "`team.rebuild_badges`" in after["app.award"].reason


def test_the_pin_an_unknown_verdicts_reason_offers_moves_the_site(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(FOLLOWED, encoding="utf-8")
    reason = _outcomes(tmp_path)["app.report"].reason
    pin = re.search(r'\[tool\.migrator\.jobs\."([^"]+)"\] idempotency = "([a-z_]+)"', reason)
    assert pin, reason
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.migrator.jobs."{pin.group(1)}"]\n'
        f'idempotency = "{pin.group(2)}"\n'
        'reason = "the telemetry endpoint replaces the document it is sent"\n',
        encoding="utf-8",
    )
    after = _outcomes(tmp_path)
    assert after["app.report"].status is Status.REWRITTEN, after["app.report"].reason
    assert after["app.refresh"].status is Status.SKIPPED  # the pin names one job, not both


def test_an_unknown_verdict_with_nothing_to_catalogue_asks_for_a_pin(tmp_path: Path) -> None:
    # A job whose effect is hidden behind a program it runs: no catalogue entry explains
    # a subprocess, so the reason says why in the verdict's words and offers the pin only.
    (tmp_path / "app.py").write_text(
        "import subprocess\nimport threading\n\n\n"
        "def convert(name):\n    subprocess.run(['convert', name], check=True)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=convert, args=(request.GET['name'],)).start()\n",
        encoding="utf-8",
    )
    outcome = _outcomes(tmp_path)["app.convert"]
    assert outcome.status is Status.SKIPPED
    assert "subprocess.run" in outcome.reason
    assert "catalogue" not in outcome.reason
    assert '[tool.migrator.jobs."app.convert"] idempotency' in outcome.reason


def test_an_unknown_job_named_moves_held_and_following_its_reason_decides_it(
    tmp_path: Path,
) -> None:
    """``--job`` moves an undecided job held (inline until decided); the catalogue entry its
    outcome names decides the verdict, and the next apply registers it ``idempotent=True``."""
    (tmp_path / "app.py").write_text(FOLLOWED, encoding="utf-8")
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    named = ApplyOptions(jobs=("app.refresh",))
    result = plan_apply(tmp_path, inventory, named, scanner=None)
    (moved,) = [o for o in result.outcomes if o.status is Status.REWRITTEN]
    assert moved.site.job == "app.refresh" and moved.reason.startswith("held: ")
    assert '@job(pool="batch", idempotency="unknown")' in result.changes[0].after
    badges = _entry(moved.reason, "profile.rebuild_badges")
    (tmp_path / "pyproject.toml").write_text(
        f"[[tool.migrator.catalogue.pure]]\n{badges}\n", encoding="utf-8"
    )
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    result = plan_apply(tmp_path, inventory, named, scanner=None)
    (moved,) = [o for o in result.outcomes if o.status is Status.REWRITTEN]
    assert not moved.reason.startswith("held")
    assert '@job(pool="batch", idempotent=True)' in result.changes[0].after


def test_hold_unknown_moves_every_undecided_job_held_and_the_decided_ones_as_before(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    scan(tmp_path, use_cache=False, jobs=1)
    plain = CliRunner().invoke(apply, [str(tmp_path)], env={"COLUMNS": "250"})
    assert "--hold-unknown for every such job" in plain.output, plain.output
    assert "report.options(" not in plain.output
    held_run = CliRunner().invoke(apply, [str(tmp_path), "--hold-unknown"], env={"COLUMNS": "250"})
    out = held_run.output
    assert '@job(pool="batch", idempotency="unknown")\n def report' in out, out
    assert '@job(pool="batch", idempotent=True)\n def tidy' in out
    assert "report.options(inline=InlineShape.THREAD).enqueue(" in out
