"""A signal's send() runs the project's receivers of that signal (Django and blinker),
and only those: scanned for real on small projects."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

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


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[EffectKind], list[str]]]:
    inventory = scan_project(FILES)
    return {
        j.qualname: (j.idempotency, {e.kind for e in j.effects}, [u.call for u in j.unexplained])
        for j in inventory.jobs
    }


def test_a_django_signal_sent_through_a_re_export_runs_its_receiver(scan_project: Scanner) -> None:
    verdict, effects, _ = _jobs(scan_project)["shop.jobs.settle"]
    assert verdict is Idempotency.NON_IDEMPOTENT
    assert effects == {EffectKind.HTTP_POST}


def test_a_blinker_signal_of_a_namespace_runs_its_decorated_receiver(scan_project: Scanner) -> None:
    verdict, effects, _ = _jobs(scan_project)["shop.hooks.register"]
    assert verdict is Idempotency.NON_IDEMPOTENT
    assert effects == {EffectKind.HTTP_POST}


def test_a_signal_nobody_in_the_scan_receives_is_not_called_safe(scan_project: Scanner) -> None:
    # ``refunded`` has no receiver here: another package may connect one. Not a no-op.
    verdict, effects, _ = _jobs(scan_project)["shop.jobs.refund"]
    assert verdict is Idempotency.UNKNOWN
    assert EffectKind.HTTP_POST not in effects


def test_a_method_named_send_that_is_no_signal_runs_itself(scan_project: Scanner) -> None:
    # ``Mailer().send`` is a project method: never dispatched to a signal's receivers.
    verdict, effects, unexplained = _jobs(scan_project)["shop.jobs.ping"]
    assert verdict is Idempotency.IDEMPOTENT
    assert effects == set() and unexplained == []


# --- a model's save(), delete() and create() send Django's model signals -------------

MODEL_FILES = {
    "desk/__init__.py": "",
    "desk/models.py": (
        "from django.db import models\n\n"
        "class Ticket(models.Model):\n    state = models.CharField(max_length=20)\n\n"
        "class Note(models.Model):\n    text = models.TextField()\n"
    ),
    "desk/receivers.py": (
        "import requests\n"
        "from django.db.models.signals import post_delete, post_save\n"
        "from django.dispatch import receiver\n\n"
        "from desk.models import Note\n\n\n"
        "@receiver(post_save, sender='desk.Ticket')\n"
        "def page_on_call(sender, instance, **kwargs):\n"
        "    requests.post('https://pager.example.com/page', json={'id': instance.pk})\n\n\n"
        "@receiver(post_save, sender=Note)\n"
        "def mail_note(sender, instance, **kwargs):\n"
        "    requests.post('https://mail.example.com/send', json={'id': instance.pk})\n\n\n"
        "def archive(sender, instance, **kwargs):\n"
        "    requests.post('https://archive.example.com/gone', json={'id': instance.pk})\n\n\n"
        "post_delete.connect(archive)\n"
    ),
    "desk/jobs.py": (
        "import threading\n\n"
        "from desk.models import Note, Ticket\n\n\n"
        "def close(ticket_id):\n"
        "    ticket = Ticket.objects.get(pk=ticket_id)\n"
        "    ticket.state = 'closed'\n"
        "    ticket.save()\n\n\n"
        "def close_all():\n"
        "    Ticket.objects.filter(state='open').update(state='closed')\n\n\n"
        "def jot(text):\n"
        "    Note.objects.create(text=text)\n\n\n"
        "def drop(note_id):\n"
        "    Note.objects.get(pk=note_id).delete()\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=close, args=(1,)).start()\n"
        "    threading.Thread(target=close_all).start()\n"
        "    threading.Thread(target=jot, args=('x',)).start()\n"
        "    threading.Thread(target=drop, args=(1,)).start()\n"
    ),
}


def _model_jobs(
    scan_project: Scanner, files: dict[str, str] = MODEL_FILES
) -> dict[str, tuple[Idempotency, set[EffectKind], set[str]]]:
    inventory = scan_project(files)
    return {
        j.qualname: (
            j.idempotency,
            {e.kind for e in j.effects},
            {step for e in j.effects for step in e.chain},
        )
        for j in inventory.jobs
    }


def test_saving_a_model_runs_its_post_save_receivers_and_no_others(scan_project: Scanner) -> None:
    verdict, effects, chain = _model_jobs(scan_project)["desk.jobs.close"]
    assert verdict is Idempotency.NON_IDEMPOTENT
    assert EffectKind.HTTP_POST in effects
    assert "desk.receivers.page_on_call" in chain  # sender="desk.Ticket": this model
    assert "desk.receivers.mail_note" not in chain  # sender=Note: another model's


def test_a_queryset_update_sends_no_signal(scan_project: Scanner) -> None:
    verdict, effects, _ = _model_jobs(scan_project)["desk.jobs.close_all"]
    assert verdict is Idempotency.IDEMPOTENT
    assert EffectKind.HTTP_POST not in effects


def test_create_and_delete_run_the_receivers_of_their_signals(scan_project: Scanner) -> None:
    jobs = _model_jobs(scan_project)
    _, _, created = jobs["desk.jobs.jot"]
    assert "desk.receivers.mail_note" in created and "desk.receivers.archive" not in created
    _, _, deleted = jobs["desk.jobs.drop"]
    assert "desk.receivers.archive" in deleted  # post_delete with no sender: every model
    assert "desk.receivers.mail_note" not in deleted


def test_a_send_naming_its_sender_runs_that_senders_receivers_only(scan_project: Scanner) -> None:
    resend = (
        "import threading\n\n"
        "from django.db.models.signals import post_save\n\n"
        "from desk.models import Note\n\n\n"
        "def replay_note(note_id):\n"
        "    post_save.send(sender=Note, instance=Note.objects.get(pk=note_id), created=False)\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=replay_note, args=(1,)).start()\n"
    )
    jobs = _model_jobs(scan_project, {**MODEL_FILES, "desk/resend.py": resend})
    _, _, chain = jobs["desk.resend.replay_note"]
    assert "desk.receivers.mail_note" in chain
    assert "desk.receivers.page_on_call" not in chain  # connected for Ticket
