"""``obj.n = F("n") - 1; obj.save()`` and ``qs.update(n=F("n") + 1)`` are increments.

The database computes an F() expression from the row as it is when the statement runs,
so a retry applies it again; a bare ``F("other")`` copy is still an overwrite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, scan
from inventory.models import EffectKind, Job

_RECEIVER = """
from django.db.models import signals
from django.dispatch import receiver

from app.models import Counter, Hit


@receiver(signals.post_delete, sender=Hit)
def on_delete(sender, instance, **kwargs):
    instance.counter.{method}()
"""

_MODEL = """
from django.db import models
{imports}


class Counter(models.Model):
    count = models.IntegerField(default=0)
    total = models.IntegerField(default=0)

    def {method}(self):
        self.refresh_from_db()
{body}

class Hit(models.Model):
    counter = models.ForeignKey(Counter, on_delete=models.CASCADE)
"""


def _scan(tmp_path: Path, body: str, imports: str = "", method: str = "bump") -> Inventory:
    app = tmp_path / "app"
    (app / "app").mkdir(parents=True)
    (app / "app" / "__init__.py").write_text("", encoding="utf-8")
    model = _MODEL.format(imports=imports, method=method, body=body)
    (app / "app" / "models.py").write_text(model, encoding="utf-8")
    (app / "app" / "signals.py").write_text(_RECEIVER.format(method=method), encoding="utf-8")
    return scan(app, use_cache=False, jobs=1)


def _job(inventory: Inventory) -> Job:
    [found] = [j for j in inventory.jobs if j.qualname.endswith("signals.on_delete")]
    return found


def _saves(job: Job) -> list[tuple[EffectKind, str]]:
    return [(e.kind, e.detail) for e in job.effects if e.api.endswith(".save")]


@pytest.mark.parametrize(
    ("imports", "value"),
    [
        ("", "models.F('count') - 1"),
        ("from django.db.models import F", "F('count') + 1"),
        ("from django.db.models import F as Col", "Col('count') + 1"),
        ("from django.db.models.expressions import F", "1 + F('count')"),
        (
            "from django.db.models import F\nfrom django.db.models.functions import Greatest",
            "Greatest(F('count') - 1, 0)",
        ),
    ],
)
def test_f_arithmetic_saved_is_an_increment(tmp_path: Path, imports: str, value: str) -> None:
    body = f"        self.count = {value}\n        self.save(update_fields=['count'])\n"
    job = _job(_scan(tmp_path, body, imports))
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    [(kind, detail)] = _saves(job)
    assert kind == EffectKind.DB_INCREMENT
    assert "self.count is set to an F() expression" in detail
    assert "a retry applies it again" in detail
    messages = [e.message for e in job.evidence]
    assert any("save: increments a stored value: a retry adds twice" in m for m in messages)
    assert not any("overwrites a row" in m for m in messages)


def test_field_name_in_a_variable(tmp_path: Path) -> None:
    """The django-comments-dab shape: ``field = 'count'; self.count = models.F(field) - 1``."""
    body = (
        "        field = 'count'\n"
        "        self.count = models.F(field) - 1\n"
        "        self.save(update_fields=[field])\n"
    )
    job = _job(_scan(tmp_path, body))
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    assert [k for k, _ in _saves(job)] == [EffectKind.DB_INCREMENT]


def test_plain_f_copy_is_still_an_overwrite(tmp_path: Path) -> None:
    body = "        self.total = models.F('count')\n        self.save(update_fields=['total'])\n"
    job = _job(_scan(tmp_path, body))
    assert job.idempotency == Idempotency.IDEMPOTENT
    assert [k for k, _ in _saves(job)] == [EffectKind.DB_OVERWRITE]
    assert any("save: overwrites a row" in e.message for e in job.evidence)


def test_in_memory_increment_keeps_its_own_evidence(tmp_path: Path) -> None:
    body = "        self.count = self.count + 1\n        self.save()\n"
    job = _job(_scan(tmp_path, body))
    [(kind, detail)] = _saves(job)
    assert kind == EffectKind.DB_INCREMENT
    assert detail == "self is incremented in memory (+=) then saved: a retry adds twice"


def test_a_function_named_otherwise_is_not_f(tmp_path: Path) -> None:
    """``self.count = round(x) + 1`` has no F() in it: an overwrite."""
    body = "        self.count = round(self.total / 2) + 1\n        self.save()\n"
    job = _job(_scan(tmp_path, body))
    assert [k for k, _ in _saves(job)] == [EffectKind.DB_OVERWRITE]


_F = "from django.db.models import F"
_ALIAS = "from django.db.models import F as Col\nfrom django.db.models.functions import Greatest"


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        (_F, "Counter.objects.filter(pk=self.pk).update(count=F('count') + 1)"),
        ("", "Counter.objects.filter(pk=self.pk).update(count=models.F('count') - 1)"),
        (_ALIAS, "Counter.objects.filter(pk=self.pk).update(count=Col('count') + 1)"),
        (_ALIAS, "Counter.objects.filter(pk=self.pk).update(count=Greatest(Col('count') - 1, 0))"),
    ],
)
def test_update_with_f_arithmetic_is_an_increment(tmp_path: Path, imports: str, call: str) -> None:
    job = _job(_scan(tmp_path, f"        {call}\n", imports))
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    [update] = [e for e in job.effects if e.api.endswith(".update")]
    assert update.kind == EffectKind.DB_INCREMENT
    assert update.detail.startswith("update() sets a column to an F() expression")
    assert any("update: increments a stored value" in e.message for e in job.evidence)


def test_f_in_the_filter_does_not_make_an_update_an_increment(tmp_path: Path) -> None:
    """``filter(count__gt=Col('total')).update(count=0)``: the F() only selects rows."""
    call = "Counter.objects.filter(count__gt=Col('total')).update(count=0)"
    job = _job(_scan(tmp_path, f"        {call}\n", _ALIAS))
    assert job.idempotency == Idempotency.IDEMPOTENT
    [update] = [e for e in job.effects if e.api.endswith(".update")]
    assert update.kind == EffectKind.DB_OVERWRITE


def test_f_arithmetic_saved_by_the_caller(tmp_path: Path) -> None:
    """A model method that only sets ``self.count = F(...) + 1`` (the caller saves)."""
    job = _job(_scan(tmp_path, "        self.count = models.F('count') + 1\n"))
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    [bump] = [e for e in job.effects if e.kind == EffectKind.DB_INCREMENT]
    assert bump.detail.startswith("sets a field of a model instance to an F() expression")
