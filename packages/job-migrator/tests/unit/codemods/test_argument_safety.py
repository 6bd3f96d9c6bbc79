"""Argument safety: a site moves only when every argument is provably storable.

An ORM instance, a lazy translation string, a request object and an open file
are never enqueued as they are; the lazy string is forced with ``str()``, the
model instance goes by id through a thin wrapper job, the others are skipped
with the missing fact in the reason. A Thread subclass of constructor data
becomes a job of that data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
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


def test_a_model_instance_goes_by_id_and_a_lazy_string_is_forced(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _shop(write_files)

    result = plan_apply(root, _inventory(root, '_("Paid")', "order", '_("Paid")'), scanner=None)

    assert [o.status for o in result.outcomes] == [Status.REWRITTEN]
    views = next(c for c in result.changes if c.path == "shop/views.py").after
    assert 'notify_by_id.enqueue(order.pk, str(_("Paid")))' in views
    assert "from shop.mail import notify, notify_by_id\n" in views
    mail = next(c for c in result.changes if c.path == "shop/mail.py").after
    assert "def notify_by_id(order_id: int, subject):" in mail
    assert "return notify(order=Order._default_manager.get(pk=order_id), subject=subject)" in mail
    assert mail.count("@job(") == 1  # the wrapper is the job; notify itself stays as it is


def test_an_instance_changed_before_the_call_is_not_moved_by_id(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _shop(write_files)

    result = plan_apply(root, _inventory(root, '"Edited"', "order", '"Edited"'), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.SKIPPED and result.changes == []
    assert "no change to `order` before the call" in outcome.reason


def test_a_request_an_open_file_and_an_unknown_value_are_never_enqueued(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _shop(write_files)
    cases = {
        '"Raw"': ("request", "cannot be serialised"),
        '"File"': ("fh", "an open file"),
        '"Unknown"': ("thing", "parameter `thing` has no annotation"),
    }
    for line, (source, why) in cases.items():
        inventory = _inventory(root, line, source, line)
        if source == "request":  # what the scanner says of a request object
            inventory.sites[0].arguments[0] = Argument(
                name="#0", source="request", serialisable=False, reason="the request object"
            )

        result = plan_apply(root, inventory, scanner=None)

        [outcome] = result.outcomes
        assert outcome.status is Status.SKIPPED and result.changes == [], line
        assert why in outcome.reason, outcome.reason


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
    assert statuses["shop.cache.Warmer.run"] == (Status.REWRITTEN, "")
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


def test_an_unstorable_argument_names_what_the_job_reads_of_it(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """A request cannot be stored, but when the job only reads a few values of it, the reason
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

        assert outcome.status is Status.SKIPPED
        said = (
            "; the job reads only `request.get_host()`, `request.user.email`, "
            "`request.META['HTTP_USER_AGENT']` of it: pass those values instead"
        )
        assert (said in outcome.reason) is hinted, outcome.reason
