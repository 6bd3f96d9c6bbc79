"""Python's method resolution order (C3) and cooperative ``super()``.

Django models, forms and views are built from mixins that share a base
(``models.Model``), and each mixin's override ends in ``super().save()``. Python orders
the classes of ``class Gallery(Displayable, RichText, BaseGallery)`` Gallery, Displayable,
RichText, BaseGallery, Model (C3; ``type.mro``), and ``super()`` in ``Displayable.save``
runs the next ``save`` of *that* order: ``BaseGallery.save``, a class ``Displayable`` does
not inherit from. The scan walked the bases depth-first (``Model`` right after
``Displayable``) and resolved ``super()`` to the writing class's own first base, so a job
saving a gallery whose mixin posts on save read `idempotent` (found on the census:
mezzanine's gallery, saved by the admin).
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]

MODELS = """import requests
from django.db import models


class Displayable(models.Model):
    title = models.CharField(max_length=10)

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        self.title = self.title.strip()
        super().save(*args, **kwargs)


class RichText(models.Model):
    content = models.TextField()

    class Meta:
        abstract = True


class BaseGallery(models.Model):
    zip_url = models.CharField(max_length=100)

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        requests.post("https://thumbs.example.com/render", json={"zip": self.zip_url})

    def delete(self, *args, **kwargs):
        requests.post("https://thumbs.example.com/purge", json={"id": self.pk})
        super().delete(*args, **kwargs)


class Gallery(Displayable, RichText, BaseGallery):
    pass


class Page(Displayable):
    pass
"""

JOBS = """import threading

from app.models import Gallery, Page


def publish(gallery_id):
    Gallery.objects.get(pk=gallery_id).save()


def retitle(page_id):
    Page.objects.get(pk=page_id).save()


def remove(gallery_id):
    Gallery.objects.get(pk=gallery_id).delete()


def view(request):
    threading.Thread(target=publish, args=(1,)).start()
    threading.Thread(target=retitle, args=(1,)).start()
    threading.Thread(target=remove, args=(1,)).start()
"""


def _verdicts(scan_project: Scanner, models: str = MODELS) -> dict[str, Idempotency]:
    inventory = scan_project({"app/__init__.py": "", "app/models.py": models, "app/jobs.py": JOBS})
    return {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}


def test_super_in_a_mixin_runs_the_next_class_of_the_instance_order(
    scan_project: Scanner,
) -> None:
    verdicts = _verdicts(scan_project)
    # Displayable.save -> super().save() -> BaseGallery.save, which posts
    assert verdicts["publish"] is Idempotency.NON_IDEMPOTENT


DIAMOND = """import threading

import requests


class Store:
    def purge(self, key):
        return None


class Local(Store):
    pass


class Remote(Store):
    def purge(self, key):
        requests.post("https://cdn.example.com/purge", json={"key": key})


class Cache(Local, Remote):
    pass


def purge(key):
    Cache().purge(key)


def view(request):
    threading.Thread(target=purge, args=("k",)).start()
"""


def test_the_order_puts_the_shared_base_last(scan_project: Scanner) -> None:
    """``Cache().purge(k)`` with ``class Cache(Local, Remote)``, both on ``Store``: Python
    runs ``Remote.purge`` (order Cache, Local, Remote, Store); a depth-first walk reached
    ``Store.purge`` through ``Local`` first, a method that does nothing."""
    inventory = scan_project({"app/__init__.py": "", "app/cache.py": DIAMOND})
    verdicts = {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}
    assert verdicts["purge"] is Idempotency.NON_IDEMPOTENT


def test_a_mixin_whose_chain_meets_no_posting_class_stays_idempotent(
    scan_project: Scanner,
) -> None:
    """Without the posting mixin anywhere below Displayable, its ``super().save()`` reaches
    Django's save only: the cooperative rule adds nothing that cannot run."""
    models = MODELS.replace(
        "class Gallery(Displayable, RichText, BaseGallery)", "class Gallery(Displayable, RichText)"
    )
    verdicts = _verdicts(scan_project, models)
    assert verdicts["publish"] is Idempotency.IDEMPOTENT
    assert verdicts["retitle"] is Idempotency.IDEMPOTENT


CHAIN = """import logging
import threading

import requests

log = logging.getLogger(__name__)


class Store:
    def purge(self, key):
        log.info("purged %s", key)


class Local(Store):
    def purge(self, key):
        log.info("local %s", key)
        super().purge(key)


class Remote(Store):
    def purge(self, key):
        requests.post("https://cdn.example.com/purge", json={"key": key})
        super().purge(key)


class Cache(Local, Remote):
    pass


def purge_both(key):
    Cache().purge(key)


def purge_local(key):
    Local().purge(key)


def view(request):
    threading.Thread(target=purge_both, args=("k",)).start()
    threading.Thread(target=purge_local, args=("k",)).start()
"""


def test_the_chain_is_read_for_the_class_the_call_is_made_on(scan_project: Scanner) -> None:
    """``Local.purge``'s ``super().purge(key)`` runs ``Remote.purge`` in a ``Cache`` and
    ``Store.purge`` in a plain ``Local``: the job on a Cache posts, the other does not."""
    inventory = scan_project({"app/__init__.py": "", "app/cache.py": CHAIN})
    verdicts = {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}
    assert verdicts["purge_both"] is Idempotency.NON_IDEMPOTENT
    assert verdicts["purge_local"] is Idempotency.IDEMPOTENT


def test_a_plugin_hook_reached_through_super_keeps_its_gap_when_a_sibling_may_run() -> None:
    """``super().clean()`` of a hook many classes override runs the base's own hook, not a
    gap (the rule example); but once a project class puts another override after the
    caller's class in its order (``class Both(ProfileForm, AuditForm)``), the same
    ``super()`` runs ``AuditForm.clean`` for a ``Both``: the gap stays, never idempotent."""
    from inventory.rule_examples import EXAMPLES
    from tests.unit.inventory.test_rule_examples import classify_example

    base = next(e for e in EXAMPLES if e.title.startswith("idempotent: super().clean()"))
    assert classify_example(base).idempotency is Idempotency.IDEMPOTENT
    jobs = base.files["shop/jobs.py"].replace(
        "        def save_profile(user_id):",
        "        class Both(ProfileForm, AuditForm):\n"
        "            pass\n\n"
        "        def save_profile(user_id):",
    )
    cooperative = base.model_copy(update={"files": {**base.files, "shop/jobs.py": jobs}})
    assert "class Both(ProfileForm, AuditForm)" in cooperative.sources()["shop/jobs.py"]
    assert classify_example(cooperative).idempotency is Idempotency.UNKNOWN
