"""A model signal whose sender is a library's model: Django's own ``User`` and ``Group``, a
third-party app's model, or ``settings.AUTH_USER_MODEL``.

Django sends ``post_save`` with the saved instance's class as ``sender``, so a receiver
connected with ``sender=User`` is handed a ``User``: its ``instance`` is of that class
whether the class is the project's or an installed library's. The library's model is read
from its source (never imported), as any library class the scan follows; its fields, many
to many relations included, type ``instance.groups.add(...)`` as they type a project
model's. Django's "Referencing the User model" asks receivers of the user model's signals
to name it ``sender=settings.AUTH_USER_MODEL``: that is the project's user model, else
Django's. A library that is not installed leaves the instance untyped (a gap), as before.
"""

from __future__ import annotations

from pathlib import Path

from inventory import Idempotency, Inventory, scan
from tests.unit.inventory.fake_venv import fake_venv, write_tree

# A minimal installed Django auth app and a third-party app with a model, as source only.
LIBRARY = {
    "django/__init__.py": "",
    "django/contrib/__init__.py": "",
    "django/contrib/auth/__init__.py": "",
    "django/contrib/auth/models.py": (
        "from django.db import models\n\n\n"
        "class Group(models.Model):\n"
        "    name = models.CharField(max_length=150)\n\n\n"
        "class PermissionsMixin(models.Model):\n"
        "    groups = models.ManyToManyField(Group, blank=True)\n\n"
        "    class Meta:\n"
        "        abstract = True\n\n\n"
        "class AbstractUser(PermissionsMixin):\n"
        "    email = models.EmailField()\n\n"
        "    class Meta:\n"
        "        abstract = True\n\n"
        "    def forget(self):\n"
        "        self.email = ''\n\n\n"
        "class User(AbstractUser):\n"
        "    pass\n"
    ),
    "Django-5.2.dist-info/METADATA": "Name: Django\nVersion: 5.2\n",
    "Django-5.2.dist-info/top_level.txt": "django\n",
    "teams/__init__.py": "",
    "teams/models.py": (
        "import requests\n"
        "from django.db import models\n\n\n"
        "class Team(models.Model):\n"
        "    name = models.CharField(max_length=40)\n"
        "    members = models.ManyToManyField('auth.User')\n\n"
        "    def announce(self):\n"
        "        requests.post('https://hooks.example.com/teams', json={'id': self.pk})\n"
    ),
    "teams-1.0.dist-info/METADATA": "Name: teams\nVersion: 1.0\n",
    "teams-1.0.dist-info/top_level.txt": "teams\n",
}

RECEIVERS = """
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db.models.signals import post_save
from django.dispatch import receiver
from teams.models import Team


@receiver(post_save, sender=User)
def join_default_group(sender, instance, created, **kwargs):
    instance.groups.add(Group.objects.get(name="members"))


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def leave_groups(sender, instance, **kwargs):
    if not instance.email:
        instance.groups.clear()


@receiver(post_save, sender=Team)
def announce_team(sender, instance, created, **kwargs):
    if created:
        instance.announce()


@receiver(post_save, sender=User)
def forget_user(sender, instance, **kwargs):
    instance.forget()
"""


def _scan(tmp_path: Path, library: dict[str, str], files: dict[str, str]) -> Inventory:
    python = fake_venv(tmp_path / "env", library)
    write_tree(tmp_path / "project", {"shop/__init__.py": "", **files})
    return scan(tmp_path / "project", use_cache=False, write=False, jobs=1, python=str(python))


def _verdicts(inventory: Inventory) -> dict[str, Idempotency]:
    return {j.qualname: j.idempotency for j in inventory.jobs}


def test_a_library_models_relation_is_typed_for_its_receivers(tmp_path: Path) -> None:
    inventory = _scan(tmp_path, LIBRARY, {"shop/signals.py": RECEIVERS})
    verdicts = _verdicts(inventory)
    # ``instance.groups`` is the many-to-many field User inherits from the library's mixin:
    # adding a pair already there, or clearing, converges on a retry.
    assert verdicts["shop.signals.join_default_group"] == Idempotency.IDEMPOTENT
    join = inventory.job("shop.signals.join_default_group")
    assert join is not None and not join.unexplained
    assert any("RelatedManager.add" in e.api for e in join.effects)
    # ``sender=settings.AUTH_USER_MODEL``, no user model of the project's: Django's User.
    assert verdicts["shop.signals.leave_groups"] == Idempotency.IDEMPOTENT
    # a third-party app's model: its own method, read from its source, posts a webhook
    assert verdicts["shop.signals.announce_team"] == Idempotency.NON_IDEMPOTENT


def test_writing_through_a_relation_is_no_change_of_the_instance(tmp_path: Path) -> None:
    """Rows of a relation are written in the database; the instance the sender holds is as it
    was, so apply's rule for objects a job changes does not hold the receiver. A method of
    the library's model that sets a field does change it."""
    inventory = _scan(tmp_path, LIBRARY, {"shop/signals.py": RECEIVERS})
    join = inventory.job("shop.signals.join_default_group")
    assert join is not None and join.changes == []
    forget = inventory.job("shop.signals.forget_user")
    assert forget is not None and forget.changes
    assert "self.email = ''" in forget.changes[0].change


def test_the_projects_own_user_model_wins_for_the_setting(tmp_path: Path) -> None:
    models = (
        "import smtplib\n"
        "from django.contrib.auth.models import AbstractUser\n"
        "from django.db import models\n\n\n"
        "class Member(AbstractUser):\n"
        "    nickname = models.CharField(max_length=40)\n\n"
        "    def groups_changed(self):\n"
        "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'x')\n"
    )
    receivers = (
        "from django.conf import settings\n"
        "from django.db.models.signals import post_save\n"
        "from django.dispatch import receiver\n\n\n"
        "@receiver(post_save, sender=settings.AUTH_USER_MODEL)\n"
        "def tell_member(sender, instance, **kwargs):\n"
        "    instance.groups_changed()\n"
    )
    inventory = _scan(tmp_path, LIBRARY, {"shop/models.py": models, "shop/signals.py": receivers})
    assert _verdicts(inventory)["shop.signals.tell_member"] == Idempotency.NON_IDEMPOTENT


def test_a_sender_from_a_library_not_installed_stays_untyped(tmp_path: Path) -> None:
    """No source for ``teams``: ``instance.announce()`` is a call the scan could not follow,
    reported as a gap, never guessed idempotent."""
    library = {k: v for k, v in LIBRARY.items() if not k.startswith("teams")}
    inventory = _scan(tmp_path, library, {"shop/signals.py": RECEIVERS})
    assert _verdicts(inventory)["shop.signals.announce_team"] == Idempotency.UNKNOWN
    team = inventory.job("shop.signals.announce_team")
    assert team is not None
    assert [u.call for u in team.unexplained] == ["instance.announce"]
