"""Receiver types (issue 10, types): the edges of each rule, beyond the rule examples."""

from __future__ import annotations

from textwrap import dedent

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._extract import extract_source
from inventory.summary import FileSummary

_MODEL = (
    "from django.db import models\n\nclass Tag(models.Model):\n    def touch(self):\n        pass\n"
)


def _summary(module: str, source: str) -> FileSummary:
    path = module.replace(".", "/") + ".py"
    return extract_source(dedent(source).lstrip(), path, module)


def _calls(summary: FileSummary, function: str) -> dict[str, str]:
    fn = next(f for f in summary.functions if f.name == function)
    return {c.receiver_source: c.target for c in fn.calls}


def test_a_module_level_container_is_not_typed_as_a_fresh_one() -> None:
    """A module-level list outlives the job (a buffer shipped later: ``_collectors``); a
    module-level set is typed, as its annotation would (``test_module_level_sets``)."""
    summary = _summary(
        "app.jobs",
        """
        BUFFER = []
        SEEN = set()

        def job(x):
            local = []
            local.append(x)
            BUFFER.append(x)
            SEEN.add(x)
        """,
    )
    calls = _calls(summary, "job")
    assert calls["local"] == "app.jobs.list.append"  # builtins are module-qualified in summaries
    assert calls["BUFFER"] != "app.jobs.list.append"  # outlives the job: not a fresh container
    assert calls["SEEN"] == "app.jobs.set.add"


def test_get_model_picks_the_model_of_the_named_app() -> None:
    blog = _summary("blog.models", _MODEL)
    shop = _summary("shop.models", _MODEL)
    jobs = _summary(
        "app.jobs",
        """
        from django.apps import apps

        Tag = apps.get_model("blog", "Tag")
        Missing = apps.get_model("blog.Nowhere")

        def job(pk):
            Tag.objects.get(pk=pk).touch()
            Missing.objects.get(pk=pk).touch()
        """,
    )
    index = SymbolIndex([blog, shop, jobs])
    fn = next(f for f in jobs.functions if f.name == "job")
    touched = [index.resolve(c.target) for c in fn.calls if c.target.endswith(".touch")]
    assert touched[0].kind == SymbolKind.FUNCTION and touched[0].name == "blog.models.Tag.touch"
    assert touched[1].kind == SymbolKind.MISSING  # an unknown model is a gap, never a guess


def test_get_model_by_keyword_is_the_same_lookup() -> None:
    """Django's signature is ``get_model(app_label, model_name=None, require_ready=True)``:
    mayan-edms writes ``apps.get_model(app_label="events", model_name="StoredEventType")``
    in every signal handler, which left each one reading Django's registry as a gap."""
    blog = _summary("blog.models", _MODEL)
    jobs = _summary(
        "app.jobs",
        """
        from django.apps import apps

        ByKeyword = apps.get_model(app_label="blog", model_name="Tag")
        Mixed = apps.get_model("blog", model_name="Tag", require_ready=False)
        Reversed = apps.get_model(model_name="Tag", app_label="blog")
        NoLabel = apps.get_model(model_name="Tag")
        Twice = apps.get_model("blog", app_label="blog", model_name="Tag")
        Other = apps.get_model("blog", "Tag", other=1)
        """,
    )
    index = SymbolIndex([blog, jobs])
    resolved = {
        name: index.resolve(f"app.jobs.{name}.touch")
        for name in ("ByKeyword", "Mixed", "Reversed", "NoLabel", "Twice", "Other")
    }
    for name in ("ByKeyword", "Mixed", "Reversed"):
        assert resolved[name].name == "blog.models.Tag.touch", name
    for name in ("NoLabel", "Twice", "Other"):
        assert resolved[name].kind != SymbolKind.FUNCTION, name


def test_get_model_of_a_django_app_is_the_library_class() -> None:
    jobs = _summary(
        "app.jobs",
        'from django.apps import apps\n\nGroup = apps.get_model("auth", "Group")\n',
    )
    index = SymbolIndex([jobs])
    assert index.resolve("app.jobs.Group").name == "django.contrib.auth.models.Group"


def test_a_helper_whose_result_type_is_unknown_leaves_the_receiver_unknown() -> None:
    summary = _summary(
        "app.jobs",
        """
        from app.helpers import load

        def job():
            thing = load()
            thing.run_it()
        """,
    )
    fn = next(f for f in summary.functions if f.name == "job")
    [call] = [c for c in fn.calls if c.receiver_source == "thing"]
    assert (call.target, call.returned_from) == ("?.run_it", "app.helpers.load()")
    index = SymbolIndex([summary])
    assert index.resolve(f"{call.returned_from}.run_it").kind != SymbolKind.FUNCTION


def test_a_class_loaded_by_module_label_or_dotted_path() -> None:
    mixins = _summary(
        "shop.apps.checkout.mixins",
        "class PlaceOrder:\n    def place(self):\n        pass\n",
    )
    views = _summary(
        "shop.views",
        """
        from shop.core.loading import get_class
        from django.utils.module_loading import import_string

        PlaceOrder = get_class("checkout.mixins", "PlaceOrder")
        Direct = import_string("shop.apps.checkout.mixins.PlaceOrder")
        Nowhere = get_class("basket.mixins", "PlaceOrder")
        """,
    )
    index = SymbolIndex([mixins, views])
    for name in ("shop.views.PlaceOrder.place", "shop.views.Direct.place"):
        assert index.resolve(name).name == "shop.apps.checkout.mixins.PlaceOrder.place"
    assert index.resolve("shop.views.Nowhere.place").kind == SymbolKind.MISSING
