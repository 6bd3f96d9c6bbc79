"""A signal's send() runs the project's receivers of that signal (Django and blinker),
and only those: scanned for real on small projects."""

from __future__ import annotations

from pathlib import Path

from inventory import EffectKind, Idempotency, scan

FILES = {
    "shop/__init__.py": "from shop.signals import order_paid as order_paid\n",
    "shop/signals.py": "from django.dispatch import Signal\n\norder_paid = Signal()\nrefunded = Signal()\n",
    "shop/receivers.py": (
        "import requests\nfrom django.dispatch import receiver\n\n"
        "from shop.signals import order_paid\n\n\n"
        "@receiver(order_paid)\n"
        "def notify_warehouse(sender, order_id, **kwargs):\n"
        "    requests.post('https://warehouse.example.com/ship', json={'order': order_id})\n"
    ),
    "shop/hooks.py": (
        "import threading\n\nimport requests\nfrom blinker import Namespace\n\n"
        "ns = Namespace()\nuser_registered = ns.signal('user-registered')\n\n\n"
        "@user_registered.connect\n"
        "def welcome(sender, email, **extra):\n"
        "    requests.post('https://mail.example.com/send', json={'to': email})\n\n\n"
        "def register(email):\n    user_registered.send('app', email=email)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=register, args=(request.form['email'],)).start()\n"
    ),
    "shop/jobs.py": (
        "import threading\n\n"
        "from shop.signals import refunded\n\n\n"
        "def settle(order_id):\n"
        "    from shop import order_paid\n\n"
        "    order_paid.send_robust(sender=None, order_id=order_id)\n\n\n"
        "def refund(order_id):\n"
        "    refunded.send(sender=None, order_id=order_id)\n\n\n"
        "class Mailer:\n"
        "    def send(self, to):\n"
        "        return len(to)\n\n\n"
        "def ping(to):\n"
        "    Mailer().send(to)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=settle, args=(request.POST['order'],)).start()\n"
        "    threading.Thread(target=refund, args=(request.POST['order'],)).start()\n"
        "    threading.Thread(target=ping, args=(request.POST['to'],)).start()\n"
    ),
}


def _jobs(tmp_path: Path) -> dict[str, tuple[Idempotency, set[EffectKind], list[str]]]:
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    return {
        j.qualname: (j.idempotency, {e.kind for e in j.effects}, [u.call for u in j.unexplained])
        for j in inventory.jobs
    }


def test_a_django_signal_sent_through_a_re_export_runs_its_receiver(tmp_path: Path) -> None:
    verdict, effects, _ = _jobs(tmp_path)["shop.jobs.settle"]
    assert verdict is Idempotency.NON_IDEMPOTENT
    assert effects == {EffectKind.HTTP_POST}


def test_a_blinker_signal_of_a_namespace_runs_its_decorated_receiver(tmp_path: Path) -> None:
    verdict, effects, _ = _jobs(tmp_path)["shop.hooks.register"]
    assert verdict is Idempotency.NON_IDEMPOTENT
    assert effects == {EffectKind.HTTP_POST}


def test_a_signal_nobody_in_the_scan_receives_is_not_called_safe(tmp_path: Path) -> None:
    # ``refunded`` has no receiver here: another package may connect one. Not a no-op.
    verdict, effects, _ = _jobs(tmp_path)["shop.jobs.refund"]
    assert verdict is Idempotency.UNKNOWN
    assert EffectKind.HTTP_POST not in effects


def test_a_method_named_send_that_is_no_signal_runs_itself(tmp_path: Path) -> None:
    # ``Mailer().send`` is a project method: never dispatched to a signal's receivers.
    verdict, effects, unexplained = _jobs(tmp_path)["shop.jobs.ping"]
    assert verdict is Idempotency.IDEMPOTENT
    assert effects == set() and unexplained == []
