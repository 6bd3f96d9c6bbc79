"""`migrator apply` never moves a job whose verdict rests on a gap (issue 10, soundness rule).

Scanned for real (not a hand-made inventory): a job that calls a library the
environment does not have is `unknown`, so it stays put; its neighbour, whose
every call is explained, is `idempotent` and moves.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from inventory import Idempotency, scan
from migrator.commands.apply import apply

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
