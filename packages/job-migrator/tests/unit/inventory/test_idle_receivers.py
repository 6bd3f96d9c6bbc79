"""A signal receiver that returns a value and reaches no effect and no call the scan could
not follow is a registry's answer, no job (bench/apply_census found 55 such sites, each
refused by apply for returning a value). One that returns nothing stays a site, effects
found or not: an effect the scan does not see must never make a receiver vanish."""

from __future__ import annotations

from pathlib import Path

from inventory import scan
from inventory.models import Pattern

SIGNALS = """from django.dispatch import Signal, receiver

from django.core.cache import cache

register_exporters = Signal()
nav_links = Signal()
page_saved = Signal()


class CsvExporter:
    name = "csv"


@receiver(register_exporters)
def csv_exporter(sender, **kwargs):
    return CsvExporter


@receiver(nav_links)
def core_links(sender, request, **kwargs):
    return [{"label": "Home", "url": "/"}] if request.user.is_authenticated else []


@receiver(page_saved)
def note_page(sender, page, **kwargs):
    print(f"saved {page}")


@receiver(page_saved)
def after_the_request(sender, page, **kwargs):
    def log_it(response):
        print(f"answered {page}")
        return response

    return None


@receiver(page_saved)
def forget_page(sender, page, **kwargs):
    cache.delete(f"page:{page}")


@receiver(page_saved)
def tell_plugins(sender, page, **kwargs):
    sender.plugin_hook(page)
"""


def _receiver_jobs(root: Path) -> dict[str, str]:
    inventory = scan(root, use_cache=False, write=False)
    verdicts = {j.qualname: j.idempotency.value for j in inventory.jobs}
    return {
        s.job.rsplit(".", 1)[1]: verdicts[s.job]
        for s in inventory.sites
        if s.pattern is Pattern.SIGNAL_RECEIVER
    }


def test_a_receiver_that_reaches_no_effect_and_no_gap_is_no_site(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "signals.py").write_text(SIGNALS)
    root = tmp_path

    found = _receiver_jobs(root)

    # The registry receivers compute and return: left out, with their jobs.
    assert "csv_exporter" not in found
    assert "core_links" not in found
    # Returning nothing, an effect (a cache delete) or a call the scan cannot follow keeps
    # a receiver.
    assert found == {
        "note_page": "idempotent",
        "after_the_request": "idempotent",  # the value is its nested function's
        "forget_page": "idempotent",
        "tell_plugins": "unknown",
    }
