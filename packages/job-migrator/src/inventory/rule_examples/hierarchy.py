"""Dispatch followed from Python's semantics: subclasses, tables of values, names built at
run time, and functions handed to a library to call."""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

_BACKENDS = """
    import requests

    class Backend:
        def create_instance(self, spec):
            return dict(spec)  # the base only validates

    class CloudBackend(Backend):
        def create_instance(self, spec):
            requests.post("https://cloud.example/instances", json=spec)

    class LocalBackend(Backend):
        def create_instance(self, spec):
            with open("/var/run/instances.json", "w") as f:
                f.write(str(spec))

    def get_backend(name) -> Backend:
        return CloudBackend() if name == "cloud" else LocalBackend()
"""

_EXPORTERS = """
    import requests

    class PdfExporter:
        def export(self, rows):
            with open("/tmp/rows.pdf", "w") as f:
                f.write(str(rows))

    class WebhookExporter:
        def export(self, rows):
            requests.post("https://hooks.example/rows", json=rows)

    EXPORTERS = {"pdf": PdfExporter(), "webhook": WebhookExporter()}
"""

_CHANNELS = """
    import requests

    def send_to_slack(text):
        requests.post("https://slack.example/hook", json={"text": text})

    def send_to_mattermost(text):
        requests.post("https://chat.example/hook", json={"text": text})

    def channel_names():
        return ["slack", "mattermost"]
"""

_GALLERY = """
    import requests
    from django.db import models

    class Displayable(models.Model):
        title = models.CharField(max_length=100)

        class Meta:
            abstract = True

        def save(self, *args, **kwargs):
            self.title = self.title.strip()
            super().save(*args, **kwargs)

    class BaseGallery(models.Model):
        zip_url = models.URLField()

        class Meta:
            abstract = True

        def save(self, *args, **kwargs):
            super().save(*args, **kwargs)
            requests.post("https://thumbs.example/render", json={"zip": self.zip_url})

    class Gallery(Displayable, BaseGallery):
        pass
"""

EXAMPLES: list[RuleExample] = [
    example(
        "cooperative super(): a mixin's super().save() runs a sibling mixin's save",
        """
        from shop.models import Gallery

        def publish(gallery_id):
            Gallery.objects.get(pk=gallery_id).save()
        """,
        "publish",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.DB_OVERWRITE, K.DB_READ},
        "Classes are ordered as Python orders them (C3, `type.mro`: `Gallery`, `Displayable`, "
        "`BaseGallery`, `Model`, the shared base last), and `super()` runs the next method of "
        "the *instance's* order: `Displayable.save`'s `super().save()` runs `BaseGallery.save` "
        "for a `Gallery`, a class `Displayable` does not inherit from. Read at the call, where "
        "the receiver's class is known: for a plain `Displayable` subclass the same `super()` "
        "reaches Django's `save` only. Before, `gallery.save()` read `idempotent`.",
        more_files={"shop/models.py": _GALLERY},
    ),
    example(
        "subclass dispatch: a receiver typed as a project base class",
        """
        from shop.backends import Backend, get_backend

        def provision(spec, backend: Backend):
            backend.create_instance(spec)

        def provision_named(spec):
            get_backend(spec["backend"]).create_instance(spec)
        """,
        "provision",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.FILE_WRITE},
        "A parameter annotated `Backend`, what a factory annotated `-> Backend` returns, an "
        "element of a `list[Backend]` or `cls(...)` in a classmethod is a `Backend` *or any "
        "subclass*: the call runs the `create_instance` of the object's class, so `Backend`'s "
        "own and every project override below it are callees, and the verdict takes the worst "
        "(capped at 16 overrides, the rest one gap, as for `self.m()`). `Backend(...).m()` and "
        "`x = Backend(...); x.m()` make exactly a `Backend`, and `super().m()` names the next "
        "class of the MRO: no dispatch there.",
        more_files={"shop/backends.py": _BACKENDS},
    ),
    example(
        "subclass dispatch: a method with no body runs its overrides",
        """
        import json

        from django.core.cache import cache

        class Notifier:
            def publish(self, event):
                raise NotImplementedError

        class CacheNotifier(Notifier):
            def publish(self, event):
                cache.set(f"event:{event['id']}", event)

        class FileNotifier(Notifier):
            def publish(self, event):
                with open(f"/var/events/{event['id']}.json", "w") as f:
                    f.write(json.dumps(event))
        """,
        "Notifier.publish",
        V.IDEMPOTENT,
        {K.CACHE_SET, K.FILE_WRITE},
        "The view starts `notifier.publish` in a thread, `notifier` typed as `Notifier`, whose "
        "`publish` has no body of its own (`raise NotImplementedError`, `pass`, `...`, "
        "`@abstractmethod`): the object's class overrides it, so each project override (up to "
        "six; seven or more are a plugin registry, a gap) is a callee, and the verdict takes "
        "the worst, as for a concrete base. Both overwrite here. Before, an abstract method's "
        "overrides were possibilities only (a gap): the job read `unknown`, while overrides "
        "that did nothing at all read `idempotent`. An override defined outside the scanned "
        "tree is not seen: scan the tree that holds it.",
        more_files={
            "shop/views.py": (
                "import threading\n\nfrom shop.jobs import Notifier\n"
                "from shop.lookups import notifier_for\n\n\n"
                "def view(request):\n"
                "    notifier: Notifier = notifier_for(request.user.id)\n"
                "    threading.Thread(target=notifier.publish, args=({'id': 1},)).start()\n"
            )
        },
    ),
    example(
        "a table of instances: `EXPORTERS[kind].export(rows)`",
        """
        from shop.exporters import EXPORTERS

        def export_rows(kind, rows):
            exporter = EXPORTERS.get(kind)
            exporter.export(rows)
        """,
        "export_rows",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.FILE_WRITE},
        "A module-level dict literal whose values are all functions, classes, modules or "
        "instances made by a constructor call (at most 16) is a table: `T[k]`, `T.get(k)` and "
        "`T.pop(k)`, inline or bound to a name first, are one of its values whichever key is "
        "asked for, in the module or in any module that imports `T`. `T[k].m()` runs the `m` "
        "of every value (a module's function, a class's method, an instance's class's "
        "method), `T[k]()` calls every value, `T[k]().m()` the `m` of what each value builds "
        "or returns. A table the module adds to (`T[k] = v`, `T.update(...)`) is a registry "
        "whose values are only known at run time: a call through it stays an unresolved call.",
        more_files={"shop/exporters.py": _EXPORTERS},
    ),
    example(
        "a table of modules: `PROVIDERS[name].delete_record(domain)`",
        """
        from shop.dns import PROVIDERS

        def clear_challenge(provider, domain):
            PROVIDERS[provider].delete_record(domain)
        """,
        "clear_challenge",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST, K.HTTP_DELETE},
        "The values are modules: `delete_record` of each is a callee.",
        more_files={
            "shop/dns/__init__.py": (
                "from shop.dns import nsone, route53\n\n"
                'PROVIDERS = {"nsone": nsone, "route53": route53}\n'
            ),
            "shop/dns/nsone.py": (
                "import requests\n\n\ndef delete_record(domain):\n"
                '    requests.delete(f"https://api.nsone.example/zones/{domain}")\n'
            ),
            "shop/dns/route53.py": (
                "import requests\n\n\ndef delete_record(domain):\n"
                '    requests.post("https://route53.example/change", json={"delete": domain})\n'
            ),
        },
    ),
    example(
        'a name built at run time: `getattr(channels, f"send_to_{channel}")`',
        """
        from shop import channels

        def announce(channel, text):
            getattr(channels, f"send_to_{channel}")(text)
        """,
        "announce",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "`getattr(M, NAME)` over a project module `M` (or over `self` / `cls`: the methods "
        "along the class's MRO), with NAME a literal, or an f-string or `+` with a literal "
        "prefix or suffix, is one of the functions (or classes) of `M` whose names fit "
        "(`send_to_*`; `channel_names` does not): each is a callee, called inline or bound "
        "first (`send = getattr(...); send(text)`). A name with no literal part, an owner "
        "that is not the project's, no name that fits or more than 16 stay dynamic dispatch "
        "(an unknown job).",
        more_files={"shop/channels.py": _CHANNELS},
    ),
    example(
        "unknown: `getattr` with a name that says nothing",
        """
        from shop import channels

        def announce_any(name, text):
            getattr(channels, name)(text)
        """,
        "announce_any",
        V.UNKNOWN,
        {K.DYNAMIC_CALL},
        "Any function of the module may run: the call is dynamic dispatch, a gap.",
        more_files={"shop/channels.py": _CHANNELS},
    ),
    example(
        "a project function handed to a library to call: `doc.build(story, onFirstPage=...)`",
        """
        import requests
        from reportlab.platypus import SimpleDocTemplate

        def credentials_pdf(account_id):
            def page_template(canvas, doc):
                requests.get(f"https://audit.example/pages/{account_id}/{doc.page}")

            doc = SimpleDocTemplate(f"/tmp/credentials-{account_id}.pdf")
            doc.build([], onFirstPage=page_template)
        """,
        "credentials_pdf",
        V.IDEMPOTENT,
        {K.REPORT_GENERATE, K.HTTP_GET},
        "A function passed to a library call whose source the scan does not follow is passed "
        "to be called: its effects are the caller's (here the GET in reportlab's page "
        "callback). Not so for calls that keep a function for later or start it elsewhere "
        "(`signal.connect(f)`, `add_url_rule(view_func=f)`, `hooks.append(f)`, "
        "`functools.partial(f)`, a decorator applied by hand, `Thread(target=f)`, "
        "`executor.submit(f)`, `loop.call_later(d, f)`: registrations, or sites of their own).",
    ),
]
