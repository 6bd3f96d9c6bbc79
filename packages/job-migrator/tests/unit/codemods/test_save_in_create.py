"""Django runs a model's own ``save`` (and signal receivers) inside calls that are not theirs:
the scan sees the work, apply never rewrites such a call, says why, and following the reason
moves the work.

Django documents ``QuerySet.create(**kwargs)`` as building the object and saving it "all in
one step" (``get_or_create`` creates through it, ``update_or_create`` saves what it finds or
makes), and a ``ModelForm``'s ``save()`` as saving ``form.instance`` unless
``commit=False``; ``bulk_create`` calls no ``save()``. So a view's
``Skill.objects.create(...)`` or ``SkillForm(data).save()`` runs ``Skill.save``, and the
HTTP call inside that override is slow work in the request. A ``post_save`` receiver runs
inside ``Order.objects.create(...)`` the same way. Before this, apply rewrote such a call
into ``Order.objects.create.enqueue(...)`` (no such attribute: the request would break), and
``skill.save()`` into ``skill.save.enqueue()`` (a worker saving the row as stored, dropping
the caller's changes). Scanned for real (Django installed), then planned by apply.
"""

from __future__ import annotations

from pathlib import Path

from codemods import SiteOutcome, Status, plan_apply
from inventory import CallSite, Inventory, Pattern, scan

MODELS = (
    "import requests\n"
    "from django import forms\n"
    "from django.db import models\n"
    "from django.db.models.signals import post_save\n"
    "from django.dispatch import receiver\n\n\n"
    "class Fetching(models.Model):\n"
    "    name = models.CharField(max_length=10)\n\n"
    "    class Meta:\n"
    "        abstract = True\n\n"
    "    def save(self, *args, **kwargs):\n"
    "        requests.get('https://example.com/' + self.name)\n"
    "        super().save(*args, **kwargs)\n\n\n"
    "class Skill(Fetching):\n"
    "    pass\n\n\n"
    "class Plain(models.Model):\n"
    "    name = models.CharField(max_length=10)\n\n\n"
    "class Order(models.Model):\n"
    "    name = models.CharField(max_length=10)\n\n\n"
    "@receiver(post_save, sender=Order)\n"
    "def ping_order(sender, instance, **kwargs):\n"
    "    requests.put('https://example.com/orders/' + str(instance.pk))\n\n\n"
    "class SkillForm(forms.ModelForm):\n"
    "    class Meta:\n"
    "        model = Skill\n"
    "        fields = ['name']\n\n\n"
    "class TidySkillForm(SkillForm):\n"
    "    def save(self, commit=True):\n"
    "        self.instance.name = self.instance.name.strip()\n"
    "        return super().save(commit=commit)\n"
)
VIEWS = (
    "from django.http import HttpResponse\n\n"
    "from app.models import Order, Plain, Skill, SkillForm, TidySkillForm\n\n\n"
    "def create_skill(request):\n"
    "    Skill.objects.create(name=request.POST['name'])\n"
    "    return HttpResponse('ok')\n\n\n"
    "def find_skill(request):\n"
    "    Skill.objects.get_or_create(name=request.POST['name'])\n"
    "    return HttpResponse('ok')\n\n\n"
    "def bulk_skills(request):\n"
    "    Skill.objects.bulk_create([Skill(name=n) for n in request.POST.getlist('n')])\n"
    "    return HttpResponse('ok')\n\n\n"
    "def create_plain(request):\n"
    "    Plain.objects.create(name=request.POST['name'])\n"
    "    return HttpResponse('ok')\n\n\n"
    "def form_skill(request):\n"
    "    SkillForm(request.POST).save()\n"
    "    return HttpResponse('ok')\n\n\n"
    "def tidy_skill(request):\n"
    "    TidySkillForm(request.POST).save()\n"
    "    return HttpResponse('ok')\n\n\n"
    "def draft_skill(request):\n"
    "    SkillForm(request.POST).save(commit=False)\n"
    "    return HttpResponse('ok')\n\n\n"
    "def rename_skill(request, pk):\n"
    "    skill = Skill.objects.get(pk=pk)\n"
    "    skill.name = request.POST['name']\n"
    "    skill.save()\n"
    "    return HttpResponse('ok')\n\n\n"
    "def create_order(request):\n"
    "    Order.objects.create(name=request.POST['name'])\n"
    "    return HttpResponse('ok')\n"
)
URLS = (
    "from django.urls import path\n\n"
    "from app import views\n\n"
    "urlpatterns = [\n"
    + "".join(
        f"    path('{n}', views.{n}),\n"
        for n in (
            "create_skill",
            "find_skill",
            "bulk_skills",
            "create_plain",
            "form_skill",
            "tidy_skill",
            "draft_skill",
            "rename_skill",
            "create_order",
        )
    )
    + "]\n"
)
# The reason's advice, followed: the fetch is a function of its own, called after the create.
MOVED_MODELS = MODELS.replace(
    "    def save(self, *args, **kwargs):\n"
    "        requests.get('https://example.com/' + self.name)\n"
    "        super().save(*args, **kwargs)\n",
    "    pass\n",
) + ("\n\ndef fetch_skill(name):\n    requests.get('https://example.com/' + name)\n")
MOVED_VIEWS = VIEWS.replace(
    "    Skill.objects.create(name=request.POST['name'])\n",
    "    skill = Skill.objects.create(name=request.POST['name'])\n    fetch_skill(skill.name)\n",
).replace(
    "from app.models import Order, Plain, Skill, SkillForm, TidySkillForm\n",
    "from app.models import Order, Plain, Skill, SkillForm, TidySkillForm, fetch_skill\n",
)


def _scan(root: Path, models: str, views: str) -> Inventory:
    for name, text in {
        "app/__init__.py": "",
        "app/models.py": models,
        "app/views.py": views,
        "app/urls.py": URLS,
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


def _sites(inventory: Inventory) -> dict[str, CallSite]:
    return {
        s.enclosing_function.rsplit(".", 1)[-1]: s for s in inventory.sites if s.enclosing_function
    }


def test_create_runs_the_models_own_save(tmp_path: Path) -> None:
    sites = _sites(_scan(tmp_path, MODELS, VIEWS))
    inside = {
        "create_skill": "Skill.objects.create",
        "find_skill": "Skill.objects.get_or_create",
        "form_skill": "SkillForm(request.POST).save",
    }
    for view, written in inside.items():
        site = sites[view]
        assert site.job == "app.models.Fetching.save", site  # the override, through the base
        assert site.run_inside == written, site
        assert site.arguments == []  # the create's keywords are not the job's arguments
    # a form's own save calling Django's through super(): the model's save runs there
    inner = sites["save"]  # the site in TidySkillForm.save, itself a form hook
    assert (inner.job, inner.run_inside) == ("app.models.Fetching.save", "super().save")
    assert sites["tidy_skill"].job == "app.models.TidySkillForm.save"
    # the model's own save called on the instance: the call is the job's
    assert sites["rename_skill"].job == "app.models.Fetching.save"
    assert sites["rename_skill"].run_inside == ""
    # a receiver runs inside the create
    assert sites["create_order"].job == "app.models.ping_order"
    assert sites["create_order"].run_inside == "Order.objects.create"
    # bulk_create calls no save(); a model without an override has no slow save to run;
    # save(commit=False) saves nothing
    for view in ("bulk_skills", "create_plain", "draft_skill"):
        assert view not in sites, (view, sites.get(view))


def test_apply_says_why_and_the_advice_moves_the_work(tmp_path: Path) -> None:
    inventory = _scan(tmp_path, MODELS, VIEWS)
    outcomes: dict[str, SiteOutcome] = {
        o.site.enclosing_function.rsplit(".", 1)[-1]: o
        for o in plan_apply(tmp_path, inventory, scanner=None).outcomes
        if o.site.enclosing_function
    }
    refused = outcomes["create_skill"]
    assert refused.status is Status.SKIPPED
    assert "which Django runs inside `Skill.objects.create(...)`" in refused.reason
    assert "call it here after the call" in refused.reason
    assert outcomes["form_skill"].status is Status.SKIPPED
    # the receiver is not rewritten at the create (``Order.objects.create.enqueue``): it
    # moves at its own site
    receiver = outcomes["create_order"]
    assert receiver.status is Status.SKIPPED, receiver
    assert "the receiver moves at its own site" in receiver.reason
    receivers = [
        o
        for o in plan_apply(tmp_path, inventory, scanner=None).outcomes
        if o.site.pattern is Pattern.SIGNAL_RECEIVER
    ]
    assert [o.status for o in receivers] == [Status.REWRITTEN]
    # ``skill.save()`` stays: a worker would save the row as stored, not the caller's changes
    saved = outcomes["rename_skill"]
    assert saved.status is Status.SKIPPED, saved
    assert "dropping the changes the caller made in memory" in saved.reason
    moved_root = tmp_path / "moved"
    moved = _scan(moved_root, MOVED_MODELS, MOVED_VIEWS)
    result = {o.site.job: o for o in plan_apply(moved_root, moved, scanner=None).outcomes}
    assert result["app.models.fetch_skill"].status is Status.REWRITTEN, sorted(result)


BLINKER_SIGNALS = (
    "import requests\n"
    "from blinker import Namespace\n\n"
    "ns = Namespace()\n"
    "registered = ns.signal('registered')\n\n\n"
    "@registered.connect\n"
    "def ping(sender, **kwargs):\n"
    "    requests.put('https://example.com/registered')\n"
)
FLASK_VIEWS = (
    "from flask import Flask\n\n"
    "from app.signals import registered\n\n"
    "app = Flask(__name__)\n\n\n"
    "@app.post('/register')\n"
    "def register():\n"
    "    registered.send(app, user=1)\n"
    "    return ''\n"
)


def test_a_receiver_of_a_signal_the_view_sends_moves_at_its_own_site_only(tmp_path: Path) -> None:
    """A blinker receiver runs inside ``registered.send(...)``: apply rewrote that call into
    ``registered.send.enqueue(...)`` (no such attribute: the request would break). The
    receiver moves where it is connected; the send stays, with the reason."""
    for name, text in {
        "app/__init__.py": "",
        "app/signals.py": BLINKER_SIGNALS,
        "app/views.py": FLASK_VIEWS,
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    result = plan_apply(tmp_path, inventory, scanner=None)
    by_pattern = {o.site.pattern: o for o in result.outcomes}
    sent = by_pattern[Pattern.DIRECT_CALL]
    assert sent.site.run_inside == "registered.send"
    assert sent.status is Status.SKIPPED, sent
    assert "a signal receiver run inside `registered.send(...)`" in sent.reason
    assert by_pattern[Pattern.SIGNAL_RECEIVER].status is Status.REWRITTEN
    assert "send.enqueue" not in result.diff
