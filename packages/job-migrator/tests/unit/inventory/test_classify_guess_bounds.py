"""Guessed calls stay local (issue 10): bounds on what a guess may bring into a job.

A call on a receiver of unknown type is guessed by method name (``_by_name``), and a call
of an empty method runs one of its overrides. Unbounded, the guesses chain: in a big code
base a job that only sets a cache key "reaches" every logger and plugin of the project,
and its verdict drowns in what they may do. Reproductions of the shapes:

* a name guess is followed one level, never through a further name guess;
* an override dispatch (the receiver's declared type bounds what runs) is not a name
  guess: a name guess under it is still followed, and slow work under both is seen;
* a family, or an empty hook, with more classes than the bound is a plain gap;
* ``super().hook()`` and constructors run the named class's own method;
* a method name that a library base of a candidate defines is not guessed.

The soundness rule holds throughout: whatever is cut leaves a gap, never ``idempotent``.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from inventory import scan
from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import CallSite, Confidence, EffectKind, Idempotency, Job, Pattern
from tests.unit.inventory.fake_venv import fake_venv, write_tree


def run(source: str) -> tuple[list[CallSite], dict[str, Job]]:
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    sites, jobs = classify([summary], MigratorConfig(), Catalogue.load(), None)
    direct = [s for s in sites if s.pattern is Pattern.DIRECT_CALL]
    return direct, {j.qualname: j for j in jobs}


def messages(job: Job) -> str:
    return "\n".join(e.message for e in job.evidence)


def reached(job: Job) -> set[str]:
    """The functions the job's effects are reached through."""
    return {q for e in job.effects for q in e.chain}


def details(job: Job) -> str:
    """What the job's effects say of where they happen (``if the receiver is X: ...``)."""
    return "\n".join(e.detail for e in job.effects)


TWO_GUESSES = """
    import threading

    import requests
    from django.http import HttpResponse

    from desk.lookups import find_relay, find_courier

    class Relay:
        def relay(self, parcel):
            courier = find_courier(parcel)
            courier.forward(parcel)

    class Courier:
        def forward(self, parcel):
            requests.post("https://couriers.example/pickups", json=parcel)

    def dispatch(pk):
        relay = find_relay(pk)
        relay.relay({"pk": pk})

    def start(request, pk):
        threading.Thread(target=dispatch, args=(pk,)).start()
        return HttpResponse()

    def inline(request, pk):
        dispatch(pk)
        return HttpResponse()
"""


def test_a_name_guess_is_not_followed_through_a_further_name_guess() -> None:
    sites, jobs = run(TWO_GUESSES)
    job = jobs["app.dispatch"]
    assert job.idempotency is Idempotency.UNKNOWN  # the guessed call is still a gap
    assert "requests.post" not in messages(job)  # two guesses away: not a sample of the call
    # Nor is it slow work of the request that runs it inline.
    assert [s.job for s in sites] == []


def test_one_name_guess_is_still_followed() -> None:
    sites, jobs = run(
        TWO_GUESSES.replace(
            "courier = find_courier(parcel)\n            courier.forward(parcel)",
            'requests.post("https://couriers.example/pickups", json=parcel)',
        )
    )
    assert [s.job for s in sites] == ["app.dispatch"]
    assert "requests.post" in messages(jobs["app.dispatch"])


def test_money_two_name_guesses_away_is_a_gap_not_unsafe() -> None:
    charged = TWO_GUESSES.replace(
        'requests.post("https://couriers.example/pickups", json=parcel)',
        'stripe.Charge.create(amount=parcel["pk"], currency="eur")',
    ).replace("import requests", "import requests\n    import stripe")
    _, jobs = run(charged)
    job = jobs["app.dispatch"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert EffectKind.PAYMENT not in {e.kind for e in job.effects}
    # One guess away, money stays an effect (``unsafe`` is the stricter verdict).
    one = charged.replace(
        "courier = find_courier(parcel)\n            courier.forward(parcel)",
        'stripe.Charge.create(amount=parcel["pk"], currency="eur")',
    )
    _, jobs = run(one)
    assert jobs["app.dispatch"].idempotency is Idempotency.UNSAFE


def test_an_override_dispatch_then_a_name_guess_is_still_slow_work() -> None:
    """The handler calls a method typed as an abstract base; an override calls, on an
    untyped receiver, the one project method of that name, which posts: the receiver's
    declared type is no guess, so the name guess under it is the first."""
    sites, jobs = run(
        """
        import requests
        from django.http import HttpResponse

        from desk.lookups import engine_for

        class Source:
            def fetch(self, query):
                raise NotImplementedError

        class TableSource(Source):
            def fetch(self, query):
                engine = engine_for(query)
                engine.refresh_token(query)

        class Engine:
            def refresh_token(self, query):
                requests.post("https://auth.example/token", data={"q": query})

        def warm(source: Source, query):
            source.fetch(query)

        def warm_up(request, source: Source):
            warm(source, request.GET["q"])
            return HttpResponse()
        """
    )
    assert [s.job for s in sites] == ["app.warm"]
    assert jobs["app.warm"].idempotency is Idempotency.UNKNOWN


FAMILY = """
    import threading

    import requests

    from desk.lookups import target_for

    class Target:
        def deliver(self, payload):
            requests.post("https://hooks.example/in", json=payload)

{subclasses}

    def ping(name):
        target = target_for(name)
        target.deliver({{"ping": True}})

    def view(request):
        threading.Thread(target=ping, args=("a",)).start()
"""


def _family(count: int) -> str:
    subclasses = "\n".join(
        f"    class Quiet{i}(Target):\n        def deliver(self, payload):\n            return None\n"
        for i in range(count)
    )
    return FAMILY.format(subclasses=subclasses)


def test_a_family_within_the_bound_is_followed() -> None:
    _, jobs = run(_family(3))
    assert "requests.post" in messages(jobs["app.ping"])


def test_a_family_wider_than_the_bound_is_a_plain_gap() -> None:
    """Seven classes define ``deliver``: a plugin registry; which one runs is configuration,
    so the call is a plain gap, not the union of every plugin's work."""
    _, jobs = run(_family(6))
    job = jobs["app.ping"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert "requests.post" not in messages(job)
    assert "target.deliver" in messages(job)


HOOKS = """
    import threading

    class Hook:
        def on_event(self, event):
            pass

{subclasses}

    def notify_all(hook: Hook, event):
        hook.on_event(event)

    def view(request):
        threading.Thread(target=notify_all, args=(None, 1)).start()
"""


def _hooks(count: int) -> str:
    subclasses = "\n".join(
        f"    class Hook{i}(Hook):\n        def on_event(self, event):\n            return event\n"
        for i in range(count)
    )
    return HOOKS.format(subclasses=subclasses)


def test_an_empty_hook_with_few_quiet_overrides_does_nothing() -> None:
    _, jobs = run(_hooks(3))
    assert jobs["app.notify_all"].idempotency is Idempotency.IDEMPOTENT


def test_an_empty_hook_with_too_many_overrides_is_a_gap() -> None:
    """Overrides past the bound are not read, so finding nothing in them proves nothing:
    the call of the hook is a gap of its own."""
    _, jobs = run(_hooks(7))
    job = jobs["app.notify_all"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert "app.Hook.on_event" in messages(job)
    # the reason says why: the source was read, the overrides are too many to follow
    assert "unresolved calls (overridden by more classes than are followed" in messages(job)
    assert "no source read" not in messages(job)


def test_constructing_a_base_runs_its_own_init_not_its_subclasses() -> None:
    _, jobs = run(
        """
        import threading

        from django.core.cache import cache
        from django.core.mail import send_mail

        class Channel:
            def __init__(self, name):
                self.name = name

        class MailChannel(Channel):
            def __init__(self, name):
                super().__init__(name)
                send_mail("Channel", name, None, ["ops@example.com"])

        def open_channel(name):
            channel = Channel(name)
            cache.set(f"channel:{name}", channel.name)

        def view(request):
            threading.Thread(target=open_channel, args=("a",)).start()
        """
    )
    job = jobs["app.open_channel"]
    assert job.idempotency is Idempotency.IDEMPOTENT, messages(job)


COOPERATIVE = """
    import threading

    from django.core.cache import cache
    from django.core.mail import send_mail

    class AfterSync:
        def done(self, user_id):
            pass

    class MarkSynced(AfterSync):
        def done(self, user_id):
            super().done(user_id)
            cache.set(f"synced:{{user_id}}", True)

    class Notify(AfterSync):
        def done(self, user_id):
            send_mail("Synced", "...", None, ["u@example.com"])

{combined}

    def mark(user_id):
        MarkSynced().done(user_id)

    def view(request):
        threading.Thread(target=mark, args=(1,)).start()
"""


def test_super_runs_the_base_hook_not_a_sibling() -> None:
    _, jobs = run(COOPERATIVE.format(combined=""))
    assert jobs["app.mark"].idempotency is Idempotency.IDEMPOTENT
    # Nor a sibling's money, which an override dispatch keeps as an effect.
    charging = COOPERATIVE.replace(
        'send_mail("Synced", "...", None, ["u@example.com"])',
        'stripe.Charge.create(amount=100, currency="eur")',
    ).replace("import threading", "import threading\n\n    import stripe")
    _, jobs = run(charging.format(combined=""))
    assert jobs["app.mark"].idempotency is Idempotency.IDEMPOTENT


def test_super_in_a_cooperative_hierarchy_may_run_a_sibling() -> None:
    """``class Both(MarkSynced, Notify)``: in a Both, ``super().done()`` in MarkSynced runs
    Notify.done, which mails: the override is a callee, and the mail counts."""
    combined = "    class Both(MarkSynced, Notify):\n        pass\n"
    _, jobs = run(COOPERATIVE.format(combined=combined))
    job = jobs["app.mark"]
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert "if the receiver is Notify" in details(job)


NOTIFIERS = """
    import json
    import threading

    from django.core.cache import cache

    from desk.lookups import notifier_for, vendor_for

    class Notifier:
        def publish(self, event):
            raise NotImplementedError

    class CacheNotifier(Notifier):
        def publish(self, event):
            cache.set(f"event:{{event['id']}}", event)

    class FileNotifier(Notifier):
        def publish(self, event):
            with open(f"/var/events/{{event['id']}}.json", "w") as f:
                f.write(json.dumps(event))

{more}

    def view(request):
        notifier: Notifier = notifier_for(request.GET["to"])
        threading.Thread(target=notifier.publish, args=({{"id": 1}},)).start()
"""


def test_an_abstract_methods_overrides_are_its_callees() -> None:
    """A thread runs ``notifier.publish``, typed as the abstract ``Notifier``: the job is the
    method with no body, and one of the project's overrides runs, so the verdict is the
    worst of theirs, as for a concrete base. Both
    overwrite: idempotent, each effect reached through its class's override. (Before, their
    effects were possibilities, a gap: the job read ``unknown``, while overrides that did
    nothing at all read ``idempotent``.)"""
    _, jobs = run(NOTIFIERS.format(more=""))
    job = jobs["app.Notifier.publish"]
    assert job.idempotency is Idempotency.IDEMPOTENT, messages(job)
    assert {"app.CacheNotifier.publish", "app.FileNotifier.publish"} <= reached(job)
    # which class each effect needs, and a verdict resting on the project's overrides only
    assert "if the receiver is CacheNotifier" in details(job)
    assert job.confidence is Confidence.MEDIUM
    assert {e.kind for e in job.effects} >= {EffectKind.CACHE_SET, EffectKind.FILE_WRITE}


def test_one_override_that_posts_makes_the_call_non_idempotent() -> None:
    webhook = (
        "    class WebhookNotifier(Notifier):\n"
        "        def publish(self, event):\n"
        '            requests.post("https://hooks.example/in", json=event)\n'
    )
    source = NOTIFIERS.format(more=webhook).replace(
        "import json", "import json\n\n    import requests"
    )
    _, jobs = run(source)
    job = jobs["app.Notifier.publish"]
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert "app.WebhookNotifier.publish" in reached(job)


def test_an_override_that_calls_what_the_scan_cannot_follow_keeps_the_gap() -> None:
    vendor = (
        "    class VendorNotifier(Notifier):\n"
        "        def publish(self, event):\n"
        "            vendor_for(event).push(event)\n"
    )
    _, jobs = run(NOTIFIERS.format(more=vendor))
    job = jobs["app.Notifier.publish"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert "push" in messages(job)


# A library base class defining the method: read from a virtualenv laid out on disk.
FORMS_LIB = {
    "formlib/__init__.py": "from formlib._forms import Form\n",
    "formlib/_forms.py": "class Form:\n    def handle_valid(self):\n        return self.cleaned\n",
    "formlib-1.0.dist-info/top_level.txt": "formlib\n",
    "formlib-1.0.dist-info/METADATA": "Name: formlib\nVersion: 1.0\n",
}
FORMS_PROJECT = {
    "app/__init__.py": "",
    "app/jobs.py": (
        "import threading\n\nfrom django.core.mail import send_mail\nfrom formlib import Form\n\n"
        "from app.lookups import bound_form\n\n\n"
        "class SignupForm(Form):\n    def handle_valid(self):\n"
        "        send_mail('Welcome', '...', None, ['u@example.com'])\n\n\n"
        "def submit(pk):\n    form = bound_form(pk)\n    form.handle_valid()\n\n\n"
        "def view(request):\n    threading.Thread(target=submit, args=(1,)).start()\n"
    ),
}


def _submit(tmp_path: Path, python: Path | None) -> Job:
    project = tmp_path / "project"
    write_tree(project, FORMS_PROJECT)
    inventory = scan(project, use_cache=False, python=str(python) if python else None)
    return next(j for j in inventory.jobs if j.qualname == "app.jobs.submit")


def test_a_method_a_library_base_defines_is_not_guessed(tmp_path: Path) -> None:
    """``form.handle_valid()`` on a form of unknown type: the library's ``Form`` defines it,
    so any form may be the receiver; the project's one override is no sample of it."""
    job = _submit(tmp_path, fake_venv(tmp_path / "venv", FORMS_LIB))
    assert job.idempotency is Idempotency.UNKNOWN  # the call stays a gap
    assert "send_mail" not in messages(job)
    assert "form.handle_valid" in messages(job)


def test_a_method_of_an_unread_base_is_still_guessed(tmp_path: Path) -> None:
    """Without the library's source nothing says ``Form`` defines the method: the guess is
    kept (a gap either way)."""
    job = _submit(tmp_path, Path(sys.executable))
    assert job.idempotency is Idempotency.UNKNOWN
    assert "send_mail" in messages(job)


def test_a_handler_calling_a_plugin_hook_still_does_its_slow_work() -> None:
    """``await provider.get_token(code)`` with ``provider`` typed as the provider base, which
    eight providers override: for the verdict a plain gap (which one is configured is only
    known at run time), but one of them runs inside the request, and it posts."""
    providers = "\n".join(
        f"    class Provider{i}(Provider):\n"
        "        def get_token(self, code):\n"
        '            return requests.post("https://idp.example/token", data={"code": code})\n'
        for i in range(8)
    )
    sites, jobs = run(
        f"""
    import requests
    from django.http import HttpResponse

    from desk.lookups import provider_for

    class Provider:
        def get_token(self, code):
            raise NotImplementedError

{providers}

    def callback(request, name):
        provider: Provider = provider_for(name)
        token = provider.get_token(request.GET["code"])
        return HttpResponse(token)
"""
    )
    assert [s.job for s in sites] == ["app.Provider.get_token"]
    job = jobs["app.Provider.get_token"]
    assert job.idempotency is Idempotency.UNKNOWN
    assert "app.Provider.get_token" in messages(job)
