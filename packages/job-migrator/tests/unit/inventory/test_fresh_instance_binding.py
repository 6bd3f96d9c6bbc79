"""``obj.save()`` is an INSERT only when ``obj`` is the instance a constructor made here.

The rule used to take any constructor call of the receiver's class earlier in the body:
django-allauth's ``create_from_request`` builds ``from_session = UserSession(...)`` (an
unsaved copy of the old values) beside ``session, created = get_or_create(...)``, and
``session.save()`` (an UPDATE of the loaded row) was read as an insert, so the job needed
a key. Now the receiver's own binding decides: a row the ORM loaded is an UPDATE
(``CallInfo.receiver_loaded``), an instance made by a known constructor is judged by that
constructor (``receiver_made_at``), and where neither is known (a name bound in branches,
an attribute) any earlier constructor of the class still makes it a possible INSERT.
"""

from __future__ import annotations

from textwrap import dedent

from inventory._extract import extract_source
from inventory.models import EffectKind, Idempotency, Job
from inventory.rule_examples._base import example
from tests.unit.inventory.test_rule_examples import classify_example

MODELS = "from django.db import models\n\nclass Row(models.Model):\n    pass\n"


def _job(source: str) -> Job:
    """``f(key)`` in ``shop/jobs.py``, run in a thread by a view, classified."""
    made = example("", source, "f", Idempotency.UNKNOWN, set(), "")
    made.files["shop/models.py"] = MODELS
    return classify_example(made)


def _made_at(source: str) -> list[tuple[str, int]]:
    return [(s, made) for s, made, _ in _receivers(source)]


def _receivers(source: str) -> list[tuple[str, int, bool]]:
    summary = extract_source(dedent(source).lstrip(), "app/m.py", "app.m")
    return [
        (c.receiver_source, c.receiver_made_at, c.receiver_loaded)
        for f in summary.functions
        for c in f.calls
        if c.target.endswith(".save")
    ]


def test_the_receiver_records_the_constructor_line_that_made_it() -> None:
    found = _made_at(
        """
        from shop.models import Row

        def f(key):
            row, created = Row.objects.get_or_create(key=key)
            copy = Row(key=key)
            row.save()
            copy.save()
            Row(key=key).save()
            got = Row.objects.get(key=key)
            got.save()
        """
    )
    assert found == [("row", 0), ("copy", 5), ("Row(key=key)", 8), ("got", 0)]


def test_a_name_rebound_from_a_constructor_to_a_loaded_row_is_the_row() -> None:
    found = _made_at(
        """
        from shop.models import Row

        def f(key):
            row = Row(key=key)
            row = Row.objects.get(key=key)
            row.save()
        """
    )
    assert found == [("row", 0)]


def test_the_constructed_copy_is_still_an_insert_when_it_is_the_one_saved() -> None:
    source = """
        from shop.models import Row

        def f(key):
            row, created = Row.objects.get_or_create(key=key)
            copy = Row(note=row.note)
            copy.save()
        """
    job = _job(source)
    assert job.idempotency is not Idempotency.IDEMPOTENT
    (insert,) = [e for e in job.effects if e.kind is EffectKind.DB_INSERT]
    assert insert.location is not None and insert.location.line == 6  # copy.save()


def test_the_loaded_row_saved_beside_a_copy_is_an_overwrite() -> None:
    source = """
        from shop.models import Row

        def f(key):
            row, created = Row.objects.get_or_create(key=key)
            copy = Row(note=row.note)
            row.note = "n"
            row.save()
            return copy
        """
    job = _job(source)
    assert job.idempotency is Idempotency.IDEMPOTENT, [e.message for e in job.evidence]
    assert EffectKind.DB_INSERT not in {e.kind for e in job.effects}


def test_loaded_rows_are_marked_as_such() -> None:
    found = _receivers(
        """
        from app.models import Row

        def f(key):
            row, created = Row.objects.get_or_create(key=key)
            for each in Row.objects.filter(key=key):
                each.save()
            row.save()
            fresh = Row(key=key)
            fresh.save()
        """
    )
    assert found == [("each", 0, True), ("row", 0, True), ("fresh", 8, False)]


def _inserts(source: str) -> list[int]:
    job = _job(source)
    return sorted(
        e.location.line for e in job.effects if e.kind is EffectKind.DB_INSERT if e.location
    )


def test_a_name_bound_in_branches_may_be_new_and_still_counts_as_an_insert() -> None:
    # tendenci's PageAdmin.save_model: ``meta = instance.meta`` or ``meta = MetaTags()``
    assert _inserts(
        """
        from shop.models import Row as Meta

        def f(instance):
            if instance.meta:
                meta = instance.meta
            else:
                meta = Meta()
            meta.title = "t"
            meta.save()
        """
    ) == [9]


def test_an_attribute_given_a_new_instance_still_counts_as_an_insert() -> None:
    # tendenci's ForumSubscriptionForm.process: ``if not self.instance: self.instance = X()``
    assert _inserts(
        """
        from shop.models import Row

        class Form:
            def f(self, key):
                if not self.instance:
                    self.instance = Row()
                self.instance.key = key
                self.instance.save()

        def f(key):
            Form().f(key)
        """
    ) == [8]


def test_a_spread_dict_literal_without_a_primary_key_is_an_insert() -> None:
    # tendenci's contacts view: ``contact = Contact(**contact_kwargs); contact.save()`` with
    # ``contact_kwargs`` a dict literal of names and a message
    assert _inserts(
        """
        from shop.models import Row

        def f(key):
            fields = {"key": key, "note": "n"}
            row = Row(**fields)
            row.save()
        """
    ) == [6]


def test_a_spread_that_may_carry_the_primary_key_is_not_an_insert() -> None:
    for setup in ('fields = {"key": key}\n    fields["pk"] = 7', "fields = dict(key=key)"):
        source = f"""
from shop.models import Row

def f(key, given):
    {setup}
    Row(**fields).save()
    Row(**given).save()
"""
        assert _inserts(source) == [], setup  # a key added later, a dict() call, a parameter


def test_the_spread_keys_are_recorded_where_they_are_known() -> None:
    summary = extract_source(
        'def f(a, b):\n    kw = {"x": a}\n    g(**kw)\n    kw["pk"] = b\n    g(**kw)\n'
        "    kw[b] = 1\n    g(**kw)\n    g(**a)\n",
        "app/m.py",
        "app.m",
    )
    (fn,) = summary.functions
    assert [c.spread_keys for c in fn.calls] == [["x"], ["x", "pk"], None, None]
