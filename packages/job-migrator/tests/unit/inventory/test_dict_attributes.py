"""``update`` / ``pop`` on a receiver of unknown type are pure only where its name says it
is a dict: a name (``context.update``) or, as Django writes them, an attribute of that
name (``field.widget.attrs.update``, ``form.cleaned_data.pop``, ``response.headers``);
a client or a queryset of unknown type (``self.client.update``) stays a call the scan could
not follow."""

from __future__ import annotations

from inventory.models import Idempotency, Job
from tests.unit.inventory.fake_venv import classified_jobs

_JOBS = """
import threading


def style(form, css):
    form.fields["name"].widget.attrs.update({"class": css})
    form.cleaned_data.pop("password", None)


def push(service, values):
    service.client.update(values)


def start(form, service):
    threading.Thread(target=style, args=(form, "wide")).start()
    threading.Thread(target=push, args=(service, {})).start()
"""


def _jobs() -> dict[str, Job]:
    return classified_jobs({"shop/__init__.py": "", "shop/jobs.py": _JOBS})


def test_an_attribute_named_as_a_dict_is_updated_in_memory() -> None:
    job = _jobs()["shop.jobs.style"]
    assert job.idempotency == Idempotency.IDEMPOTENT, [e.message for e in job.evidence]
    assert not job.unexplained


def test_a_client_of_unknown_type_is_still_a_gap() -> None:
    job = _jobs()["shop.jobs.push"]
    assert job.idempotency == Idempotency.UNKNOWN
    assert [u.call for u in job.unexplained] == ["service.client.update"]
