"""The plan warns of a moving job that writes files where it runs: a worker writes on its own
machine, so the files must be where the app reads them."""

from __future__ import annotations

from inventory.models import Effect, EffectKind, Idempotency, Location
from migrator.plan import PhaseId, build_plan, render_markdown
from tests.unit.migrator.plan_builders import inventory, make_job, make_site

WARNING = "writes files where it runs"


def _write(api: str, line: int, kind: EffectKind = EffectKind.FILE_WRITE) -> Effect:
    return Effect(kind=kind, location=Location(path="app/images.py", line=line), api=api)


def _details(verdict: Idempotency, *effects: Effect) -> list[str]:
    job = make_job("app.thumb", verdict, effects=list(effects))
    plan = build_plan(inventory([job], [make_site("app.thumb", 10)]))
    phases = {p.id: p for p in plan.phases}
    if verdict is Idempotency.IDEMPOTENT:
        return next(i for i in phases[PhaseId.IDEMPOTENT].items if i.job == "app.thumb").details
    return next(g for g in phases[PhaseId.NON_IDEMPOTENT].groups if g.job == "app.thumb").details


def test_a_job_saving_an_image_to_a_path_is_warned_of_in_its_move_step() -> None:
    details = _details(Idempotency.IDEMPOTENT, _write("PIL.Image.Image.save", 37))
    warning = next(d for d in details if WARNING in d)
    assert "`PIL.Image.Image.save` at app/images.py:37" in warning
    assert "shared volume" in warning


def test_a_job_writing_through_django_storage_is_not_warned_of() -> None:
    storage = _write("django.core.files.storage.default_storage.save", 9, EffectKind.FILE_APPEND)
    field = _write("django.db.models.fields.files.FieldFile.save", 12, EffectKind.FILE_APPEND)
    details = _details(Idempotency.IDEMPOTENT, storage, field)
    assert not any(WARNING in d for d in details)


def test_a_job_without_file_writes_is_not_warned_of() -> None:
    assert not any(WARNING in d for d in _details(Idempotency.IDEMPOTENT))


def test_a_keyed_job_is_warned_of_too_and_long_lists_are_cut() -> None:
    writes = [_write("open", line) for line in (3, 4, 5, 6, 7)]
    details = _details(Idempotency.NON_IDEMPOTENT, *writes)
    warning = next(d for d in details if WARNING in d)
    assert warning.startswith("- ")
    assert "`open` at app/images.py:5" in warning
    assert "app/images.py:6" not in warning
    assert "and 2 more" in warning


def test_the_warning_is_written_into_migration_plan_md() -> None:
    job = make_job("app.thumb", Idempotency.IDEMPOTENT, effects=[_write("open", 25)])
    text = render_markdown(build_plan(inventory([job], [make_site("app.thumb", 10)])))
    assert f"{WARNING} (`open` at app/images.py:25)" in text


def test_a_job_deleting_files_where_it_runs_is_warned_of_with_its_own_words() -> None:
    removed = _write("os.remove", 14, EffectKind.FILE_DELETE)
    details = _details(Idempotency.IDEMPOTENT, removed)
    warning = next(d for d in details if "files where it runs" in d)
    assert "deletes files where it runs (`os.remove` at app/images.py:14)" in warning
    assert "a worker deletes them on its own machine" in warning
    assert "the app's own copies stay as they were" in warning
    assert WARNING not in warning  # it writes nothing

    both = _details(Idempotency.IDEMPOTENT, _write("open", 3), removed)
    warning = next(d for d in both if "files where it runs" in d)
    assert "writes and deletes files where it runs (`open` at app/images.py:3, `os.remove`" in (
        warning
    )
    assert "a worker changes them on its own machine" in warning


def test_a_job_deleting_through_django_storage_is_not_warned_of() -> None:
    storage = _write("django.core.files.storage.default_storage.delete", 9, EffectKind.FILE_DELETE)
    assert not any("files where it runs" in d for d in _details(Idempotency.IDEMPOTENT, storage))
