"""How arguments cross: JSON, a runtime codec, or checked at run time (docs/apply.md).

A model instance crosses by reference (the runtime's codec), a lazy translation
string is forced with ``str()``; a request or an open file moves with a note
(every call falls back to running in-process) unless the fallback is not how
the site ran (a child process). A Thread subclass of constructor data becomes a
job of that data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Crossing, Status, plan_apply
from inventory.models import Argument, Inventory, Pattern
from tests.unit.codemods.conftest import build_inventory

MODELS = """from django.db import models


class Order(models.Model):
    total = models.IntegerField()
"""

MAIL = """from shop.models import Order


def notify(order: Order, subject):
    ...
"""

VIEWS = """from django.utils.translation import gettext_lazy as _

from shop.mail import notify
from shop.models import Order


def paid(request, order_id: int):
    order = Order.objects.get(pk=order_id)
    notify(order, _("Paid"))


def edited(request, order_id: int):
    order = Order.objects.get(pk=order_id)
    order.total = 0
    notify(order, "Edited")


def raw(request):
    notify(request, "Raw")


def upload(path: str):
    fh = open(path)
    notify(fh, "File")


def later(thing):
    notify(thing, "Unknown")
"""


def _args(*sources: str) -> list[Argument]:
    return [Argument(name=f"#{i}", source=s, serialisable=None) for i, s in enumerate(sources)]


def _inventory(root: Path, line: str, *sources: str) -> Inventory:
    inventory = build_inventory(
        root, [("shop/views.py", line, Pattern.DIRECT_CALL, "shop.mail.notify")]
    )
    inventory.sites[0].arguments = _args(*sources)
    return inventory


def _shop(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files(
        {
            "shop/__init__.py": "",
            "shop/models.py": MODELS,
            "shop/mail.py": MAIL,
            "shop/views.py": VIEWS,
        }
    )


def test_a_model_instance_crosses_by_reference_and_a_lazy_string_is_forced(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _shop(write_files)

    result = plan_apply(root, _inventory(root, '_("Paid")', "order", '_("Paid")'), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN
    views = next(c for c in result.changes if c.path == "shop/views.py").after
    assert 'notify.enqueue(order, str(_("Paid")))' in views
    assert "by_id" not in views
    mail = next(c for c in result.changes if c.path == "shop/mail.py").after
    assert "def notify(order: Order, subject):" in mail and "by_id" not in mail
    assert outcome.arguments_note() == (
        "order: codec: model instance (shop.models.Order), by reference; "
        '_("Paid"): JSON (a lazy string, forced with str() in the caller\'s language)'
    )


def test_an_instance_changed_before_the_call_moves_by_reference(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """The worker reads the row again: what the caller changed and did not save is not carried
    (docs/apply.md), exactly what a model codec promises."""
    root = _shop(write_files)

    result = plan_apply(root, _inventory(root, '"Edited"', "order", '"Edited"'), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert [c.how for c in outcome.crossings] == [Crossing.CODEC, Crossing.JSON]


def _request_inventory(root: Path, line: str, source: str) -> Inventory:
    inventory = _inventory(root, line, source, line)
    if source == "request":  # what the scanner says of a request object
        inventory.sites[0].arguments[0] = Argument(
            name="#0", source="request", serialisable=False, reason="the request object"
        )
    return inventory


def test_a_request_an_open_file_and_an_unknown_value_move_with_a_note(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """A direct call's fallback is the direct call: provably unstorable arguments move, and the
    note says every call runs in-process until the data is passed instead."""
    root = _shop(write_files)
    cases = {
        '"Raw"': ("request", "never storable as written (the request object)"),
        '"File"': ("fh", "never storable as written (an open file: pass its path)"),
        '"Unknown"': ("thing", "parameter `thing` has no annotation"),
    }
    for line, (source, why) in cases.items():
        result = plan_apply(root, _request_inventory(root, line, source), scanner=None)

        [outcome] = result.outcomes
        assert outcome.status is Status.REWRITTEN, outcome.reason
        assert outcome.crossings[0].how is Crossing.RUNTIME
        assert why in outcome.crossings[0].detail, outcome.crossings


def test_a_child_process_with_an_unstorable_argument_stays_until_data_is_passed(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """A process's fallback would be a thread of the web process: refused, and the reason's one
    change (pass the data the job needs) makes the site move."""
    before = "from multiprocessing import Process\n\n\ndef ship(request):\n    Process(target=notify, args=(request, 1)).start()\n"
    after = before.replace("args=(request, 1)", "args=(request.user.email, 1)")
    root = _shop(write_files)
    for text, moves in ((before, False), (after, True)):
        (root / "shop/ship.py").write_text("from shop.mail import notify\n" + text)
        inventory = build_inventory(
            root, [("shop/ship.py", "Process(", Pattern.PROCESS, "shop.mail.notify", "Process")]
        )
        first = "request" if not moves else "request.user.email"
        reason = "the request object" if not moves else ""
        inventory.sites[0].arguments = [
            Argument(
                name="#0", source=first, serialisable=False if not moves else None, reason=reason
            ),
            Argument(name="#1", source="1", serialisable=True),
        ]

        [outcome] = plan_apply(root, inventory, scanner=None).outcomes

        assert (outcome.status is Status.REWRITTEN) is moves, outcome.reason
        if not moves:
            assert "a child process: the fallback runs the job in a thread" in outcome.reason
            assert "pass the data the job needs instead, then apply again" in outcome.reason


WARMER = """from threading import Thread


def warm(product_id):
    ...


class Warmer(Thread):
    def __init__(self, product_id: int) -> None:
        super().__init__(name="warmer")
        self.product_id = product_id

    def run(self) -> None:
        warm(self.product_id)


class Leaky(Thread):
    def __init__(self, product_id: int) -> None:
        super().__init__()
        self.product_id = product_id

    def run(self) -> None:
        warm(self.other)
"""

ROUTES = """from shop.cache import Leaky, Warmer


def created(product_id: int):
    Warmer(product_id).start()


def updated(product_id: int):
    Leaky(product_id).start()
"""


def test_a_thread_subclass_of_constructor_data_becomes_a_job_of_that_data(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = write_files({"shop/__init__.py": "", "shop/cache.py": WARMER, "shop/routes.py": ROUTES})
    sites = [
        ("shop/routes.py", "Warmer(product_id)", Pattern.THREAD, "shop.cache.Warmer.run", "Warmer"),
        ("shop/routes.py", "Leaky(product_id)", Pattern.THREAD, "shop.cache.Leaky.run", "Leaky"),
    ]
    inventory = build_inventory(root, sites)
    for site in inventory.sites:
        site.arguments = _args("product_id")

    result = plan_apply(root, inventory, scanner=None)

    statuses = {o.site.job: (o.status, o.reason) for o in result.outcomes}
    assert statuses["shop.cache.Warmer.run"] == (Status.REWRITTEN, "arguments: product_id: JSON")
    assert statuses["shop.cache.Leaky.run"][0] is Status.SKIPPED
    assert "reads self.other" in statuses["shop.cache.Leaky.run"][1]
    routes = next(c for c in result.changes if c.path == "shop/routes.py").after
    assert "    run_warmer.options(inline=InlineShape.THREAD).enqueue(product_id)\n" in routes
    assert "from shop.cache import Leaky, run_warmer\n" in routes  # Warmer's went with its last use
    cache = next(c for c in result.changes if c.path == "shop/cache.py").after
    assert "def run_warmer(product_id: int) -> None:" in cache
    assert "    Warmer(product_id=product_id).run()\n" in cache


HINTED_MAIL = """def notify(request, subject):
    host = request.get_host()
    user_email = request.user.email
    agent = request.META["HTTP_USER_AGENT"]
    return host, user_email, agent, subject


def render_it(request, subject):
    return render(request, subject)
"""

HINTED_VIEWS = """from shop.mail import notify, render_it


def raw(request):
    notify(request, "Raw")


def whole(request):
    render_it(request, "Whole")
"""


def test_an_unstorable_argument_notes_what_the_job_reads_of_it(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """A request cannot be stored, but when the job only reads a few values of it, the note
    says which: those are what to pass instead. Passed on whole, no such list is given."""
    root = write_files(
        {"shop/__init__.py": "", "shop/mail.py": HINTED_MAIL, "shop/views.py": HINTED_VIEWS}
    )
    for fragment, job, hinted in (
        ('notify(request, "Raw")', "shop.mail.notify", True),
        ('render_it(request, "Whole")', "shop.mail.render_it", False),
    ):
        inventory = build_inventory(root, [("shop/views.py", fragment, Pattern.DIRECT_CALL, job)])
        inventory.sites[0].arguments = [
            Argument(name="#0", source="request", serialisable=False, reason="the request object"),
            Argument(name="#1", source='"x"', serialisable=True),
        ]

        [outcome] = plan_apply(root, inventory, scanner=None).outcomes

        assert outcome.status is Status.REWRITTEN
        said = (
            "; the job reads only `request.get_host()`, `request.user.email`, "
            "`request.META['HTTP_USER_AGENT']` of it: pass those values instead"
        )
        assert (said in outcome.crossings[0].detail) is hinted, outcome.crossings
