"""What a signal receiver is handed types its parameters, and what it hands on.

Two ways a receiver's parameters are known without an annotation:

* A model signal's ``instance`` is the sender's class (``@receiver(post_save,
  sender=Order)``); handed on to a helper (``sync(instance)``), the helper's parameter is
  that class too, as a caller's own typed parameter is.
* The project's own signal (``order_shipped = Signal()``) runs its receivers with the
  keywords its sends pass (``order_shipped.send(sender=Order, order=self)``): where every
  send agrees, the receiver's ``order`` is that class.

Each project has a ``Parcel`` whose ``tracking_url`` posts, so a ``tracking_url()`` call the
scan cannot type stays undecided (``unknown``): only the typing decides the verdicts, and
every adversary (two sends disagreeing, a spread ``**kwargs``, a receiver also hearing a
model signal, a signal defined elsewhere) must leave the parameter untyped.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency

Verdicts = Callable[..., dict[str, Idempotency]]  # the app_verdicts fixture (conftest)

MODELS = (
    "from django.db import models\n"
    "from app.signals import order_shipped\n\n\n"
    "class Order(models.Model):\n"
    "    code = models.CharField(max_length=10)\n\n"
    "    def tracking_url(self):\n"
    "        return 'https://carrier.example/track/' + self.code\n\n"
    "    def ship(self):\n"
    "        self.save()\n"
    "        order_shipped.send(sender=Order, order=self)\n\n\n"
    "class Parcel(models.Model):\n"
    "    def tracking_url(self):\n"
    "        import requests\n"
    "        requests.post('https://carrier.example/parcels')\n"
    "        return ''\n"
)
SIGNALS = "from django.dispatch import Signal\n\norder_shipped = Signal()\nparcel_lost = Signal()\n"
HELPERS = (
    "import requests\n\n\n"
    "def sync(order):\n"
    "    requests.put(order.tracking_url(), json={'state': 'shipped'})\n"
)


def _notify_carrier(*signals: str, params: str = "sender, order, **kwargs") -> str:
    """A receiver module: ``notify_carrier`` connected to each of ``signals`` (names in
    ``app.signals``, or ``post_save``), calling ``order.tracking_url()``."""
    own = [s for s in signals if s != "post_save"]
    return (
        "import requests\n"
        + ("from django.db.models.signals import post_save\n" if "post_save" in signals else "")
        + "from django.dispatch import receiver\n"
        + f"from app.signals import {', '.join(own)}\n\n\n"
        + "".join(f"@receiver({s})\n" for s in signals)
        + f"def notify_carrier({params}):\n"
        + "    requests.put(order.tracking_url())\n"
    )


def test_a_model_signal_s_instance_types_the_helper_it_is_handed_to(
    app_verdicts: Verdicts,
) -> None:
    receivers = (
        "from django.db.models.signals import post_save\n"
        "from django.dispatch import receiver\n"
        "from app.helpers import sync\n"
        "from app.models import Order\n\n\n"
        "@receiver(post_save, sender=Order)\n"
        "def on_saved(sender, instance, **kwargs):\n"
        "    sync(instance)\n"
    )

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, helpers=HELPERS, receivers=receivers)

    # sync's `order` is an Order: tracking_url builds a string, the PUT converges
    assert verdicts["on_saved"] is Idempotency.IDEMPOTENT


def test_a_project_signal_s_receiver_is_typed_by_what_its_sends_pass(
    app_verdicts: Verdicts,
) -> None:
    receivers = (
        "import requests\n"
        "from django.dispatch import receiver\n"
        "from app.signals import order_shipped\n\n\n"
        "@receiver(order_shipped)\n"
        "def notify_carrier(sender, order, **kwargs):\n"
        "    requests.put(order.tracking_url(), json={'state': 'shipped'})\n\n\n"
        "@receiver(order_shipped)\n"
        "def by_kwargs(sender, **kwargs):\n"
        "    requests.put(kwargs['order'].tracking_url())\n"
    )

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, receivers=receivers)

    assert verdicts["notify_carrier"] is Idempotency.IDEMPOTENT
    assert verdicts["by_kwargs"] is Idempotency.IDEMPOTENT


def test_sends_that_disagree_type_nothing(app_verdicts: Verdicts) -> None:
    parcels = (
        "from app.models import Parcel\n"
        "from app.signals import order_shipped\n\n\n"
        "def lose(parcel_id):\n"
        "    order_shipped.send(sender=None, order=Parcel.objects.get(pk=parcel_id))\n"
    )
    receivers = _notify_carrier("order_shipped")

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, parcels=parcels, receivers=receivers)

    assert verdicts["notify_carrier"] is not Idempotency.IDEMPOTENT


def test_a_send_spreading_kwargs_types_nothing_it_does_not_name(app_verdicts: Verdicts) -> None:
    parcels = (
        "from app.signals import order_shipped\n\n\n"
        "def forward(**extra):\n"
        "    order_shipped.send(sender=None, **extra)\n"
    )
    receivers = _notify_carrier("order_shipped")

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, parcels=parcels, receivers=receivers)

    assert verdicts["notify_carrier"] is not Idempotency.IDEMPOTENT


def test_a_receiver_also_hearing_a_model_signal_is_not_typed_by_the_project_s_sends(
    app_verdicts: Verdicts,
) -> None:
    # post_save hands `order=` to nobody: Django sends it for every saved row, with
    # keywords the project's sends of order_shipped say nothing about.
    receivers = _notify_carrier("order_shipped", "post_save", params="sender, order=None, **kwargs")

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, receivers=receivers)

    assert verdicts["notify_carrier"] is not Idempotency.IDEMPOTENT


def test_a_signal_the_project_never_sends_types_nothing(app_verdicts: Verdicts) -> None:
    # parcel_lost is sent by other packages, if at all: its keywords are unknown here,
    # even though order_shipped (heard too) is sent with an Order.
    receivers = _notify_carrier("order_shipped", "parcel_lost")

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, receivers=receivers)

    assert verdicts["notify_carrier"] is not Idempotency.IDEMPOTENT


def test_a_model_signal_sent_by_hand_types_nothing(app_verdicts: Verdicts) -> None:
    # Django sends post_save for every saved row of every model: one send written out with
    # an Order says nothing of the instances the other sends carry.
    receivers = (
        "import requests\n"
        "from django.db.models.signals import post_save\n"
        "from django.dispatch import receiver\n"
        "from app.models import Order\n\n\n"
        "@receiver(post_save)\n"
        "def on_any_save(sender, instance, **kwargs):\n"
        "    requests.put(instance.tracking_url())\n\n\n"
        "def resend(order_id):\n"
        "    post_save.send(sender=Order, instance=Order.objects.get(pk=order_id), created=False)\n"
    )

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, receivers=receivers)

    assert verdicts["on_any_save"] is not Idempotency.IDEMPOTENT


def test_a_helper_another_caller_hands_another_class_stays_untyped(app_verdicts: Verdicts) -> None:
    receivers = (
        "from django.db.models.signals import post_save\n"
        "from django.dispatch import receiver\n"
        "from app.helpers import sync\n"
        "from app.models import Order, Parcel\n\n\n"
        "@receiver(post_save, sender=Order)\n"
        "def on_saved(sender, instance, **kwargs):\n"
        "    sync(instance)\n\n\n"
        "def resync(parcel_id):\n"
        "    sync(Parcel.objects.get(pk=parcel_id))\n"
    )

    verdicts = app_verdicts(models=MODELS, signals=SIGNALS, helpers=HELPERS, receivers=receivers)

    assert verdicts["on_saved"] is not Idempotency.IDEMPOTENT
