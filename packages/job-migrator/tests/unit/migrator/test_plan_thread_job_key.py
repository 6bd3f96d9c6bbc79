"""A ``Thread`` subclass's ``run`` in the plan: its key names the constructor's data (issue 11).

Once moved, such a job is a job of its constructor's data (``codemods._threadjob``),
so the plan suggests a key over those parameters, not "the job takes no input"
(django-comments-xtd's ``EmailThread(subject, body, ...).start()``).
"""

from __future__ import annotations

from pathlib import Path

from inventory.models import Idempotency, Inventory, Job, Location
from migrator.plan import PhaseId, build_plan
from migrator.plan.keys import NO_INPUT, resolve_key
from tests.unit.migrator.plan_builders import make_job, make_site

MAIL = """\
import threading


class EmailThread(threading.Thread):
    def __init__(self, subject, body, recipient_list):
        self.subject = subject
        self.body = body
        self.recipient_list = recipient_list
        threading.Thread.__init__(self)

    def run(self):
        print(self.subject, self.body, self.recipient_list)


class Busy(threading.Thread):
    def __init__(self, subject):
        self.subject = subject.strip()
        threading.Thread.__init__(self)

    def run(self):
        print(self.subject)
"""


def _thread_job(root: Path, cls: str) -> Job:
    (root / "mail.py").write_text(MAIL)
    job = make_job(f"mail.{cls}.run", Idempotency.NON_IDEMPOTENT, parameters=["self"])
    return job.model_copy(update={"location": Location(path="mail.py", line=4), "fast_track": True})


def test_a_thread_subclass_job_is_keyed_over_its_constructors_data(tmp_path: Path) -> None:
    job = _thread_job(tmp_path, "EmailThread")
    found = resolve_key(job, root=tmp_path)
    assert found.template == "mail.EmailThread.run:{*}"
    assert "subject, body, recipient_list" in found.source
    plan = build_plan(Inventory(root=str(tmp_path), jobs=[job], sites=[make_site(job.qualname, 5)]))
    (group,) = plan.phase(PhaseId.NEEDS_KEY).groups
    apply = next(i for i in group.items if i.id.endswith("/apply"))
    assert apply.key == "mail.EmailThread.run:{*}"
    # a declared key over the constructor's data fits the job
    declared = resolve_key(job, "mail:{recipient_list}:{subject}", root=tmp_path)
    assert declared.problem is None


def test_a_thread_apply_cannot_make_a_job_of_keeps_no_input(tmp_path: Path) -> None:
    # Busy's constructor computes (subject.strip()): not a job of its data, so no key either
    job = _thread_job(tmp_path, "Busy")
    found = resolve_key(job, root=tmp_path)
    assert found.template is None and found.source == NO_INPUT
