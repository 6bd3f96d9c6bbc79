"""Django's user models carry two documented many-to-many fields, ``groups`` and
``user_permissions`` (``PermissionsMixin``). A receiver handed a user the scan cannot type
(tendenci's ``post_save`` receiver of ``get_user_model()`` through its own wrapper) edits
them through related managers: ``add`` "will not duplicate the relation", so a retry
converges. Before, ``instance.user_permissions.add`` was a gap in about 90 tendenci jobs. A
set that happens to be called ``groups`` is not a relation."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory
from inventory.models import EffectKind

Scanner = Callable[[dict[str, str]], Inventory]

APP = """import threading


def user_saved(instance, created, **kwargs):
    if created:
        instance.user_permissions.add(1, 2)


def join(user, group):
    user.groups.add(group)


def leave(user, group):
    user.groups.remove(group)


class Box:
    def __init__(self):
        self.groups = set()

    def put(self, g):
        self.groups.add(g)


def view(u, p):
    threading.Thread(target=user_saved, args=(u, True)).start()
    threading.Thread(target=join, args=(u, p)).start()
    threading.Thread(target=leave, args=(u, p)).start()
    threading.Thread(target=Box().put, args=(p,)).start()
"""


def test_a_users_groups_and_permissions_are_relation_edits(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    expected = {
        "app.user_saved": EffectKind.DB_UPSERT,
        "app.join": EffectKind.DB_UPSERT,
        "app.leave": EffectKind.DB_DELETE,
    }
    for name, kind in expected.items():
        job = jobs[name]
        assert [e.kind for e in job.effects] == [kind], (name, job.unexplained)
        assert job.idempotency is Idempotency.IDEMPOTENT, (name, job.evidence)
    assert jobs["app.Box.put"].effects == []


def test_a_relation_edit_is_no_change_of_the_user_it_is_called_on(
    scan_project: Scanner,
) -> None:
    """Rows of the relation are written in the database; the user object the caller holds is
    as it was, so ``apply``'s rule for jobs that change their caller's object does not hold
    the receiver back."""
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    for name in ("app.user_saved", "app.join", "app.leave"):
        assert jobs[name].changes == [], (name, jobs[name].changes)
