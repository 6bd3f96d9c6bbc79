"""Global resolution: re-exports, aliases, star imports, bases, cycles."""

from __future__ import annotations

from pathlib import Path

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._env import find_environment
from inventory._thirdparty import Library
from inventory.summary import ClassInfo, Span
from tests.unit.inventory.classify_builders import fn, module


def cls(qualname: str, *bases: str, methods: tuple[str, ...] = ()) -> ClassInfo:
    return ClassInfo(
        qualname=qualname,
        name=qualname.rsplit(".", 1)[-1],
        span=Span(line=1),
        bases=list(bases),
        methods=list(methods),
    )


INDEX = SymbolIndex(
    [
        module(
            "pkg",
            is_package=True,
            imports={"send_email": "pkg.mail.send_email", "post": "requests.post"},
        ),
        module("pkg.mail", fn("pkg.mail.send_email")),
        module("pkg.alias", assignments={"send": "pkg.send_email"}),
        module("pkg.star", star_imports=["pkg.mail"]),
        module("pkg.loop_a", imports={"x": "pkg.loop_b.x"}),
        module("pkg.loop_b", imports={"x": "pkg.loop_a.x"}),
        module(
            "pkg.models",
            fn("pkg.models.Base.save"),
            fn("pkg.models.Order.__init__"),
            classes=[
                cls("pkg.models.Base", "django.db.models.Model", methods=("save",)),
                cls("pkg.models.Order", "pkg.models.Base", methods=("__init__",)),
                cls("pkg.models.Worker", "threading.Thread"),
                cls("pkg.models.Odd", "pkg.models.Odd"),
            ],
        ),
    ]
)


def test_exact_qualname() -> None:
    assert INDEX.resolve("pkg.mail.send_email").kind == SymbolKind.FUNCTION


def test_package_re_export_is_followed() -> None:
    found = INDEX.resolve("pkg.send_email")
    assert (found.kind, found.name) == (SymbolKind.FUNCTION, "pkg.mail.send_email")


def test_alias_then_re_export_chain() -> None:
    assert INDEX.resolve("pkg.alias.send").name == "pkg.mail.send_email"


def test_star_import() -> None:
    assert INDEX.resolve("pkg.star.send_email").name == "pkg.mail.send_email"


def test_re_export_of_a_library_name_is_external() -> None:
    found = INDEX.resolve("pkg.post")
    assert (found.kind, found.name) == (SymbolKind.EXTERNAL, "requests.post")


def test_import_cycles_terminate_as_missing() -> None:
    assert INDEX.resolve("pkg.loop_a.x").kind == SymbolKind.MISSING


def test_methods_are_found_through_bases() -> None:
    found = INDEX.resolve("pkg.models.Order.save")
    assert (found.kind, found.name) == (SymbolKind.FUNCTION, "pkg.models.Base.save")
    assert INDEX.method("pkg.models.Order", "__init__") == "pkg.models.Order.__init__"


def test_members_not_defined_in_the_project_stay_named() -> None:
    found = INDEX.resolve("pkg.models.Order.objects.create")
    assert (found.kind, found.name) == (SymbolKind.MEMBER, "pkg.models.Order.objects.create")


def test_thread_ancestry_and_self_cycles() -> None:
    assert INDEX.derives_from("pkg.models.Worker", "threading.Thread")
    assert not INDEX.derives_from("pkg.models.Order", "threading.Thread")
    assert INDEX.mro("pkg.models.Odd") == ["pkg.models.Odd"]


def test_unimported_builtins_are_external() -> None:
    found = INDEX.resolve("pkg.mail.open")
    assert (found.kind, found.name) == (SymbolKind.EXTERNAL, "open")
    assert INDEX.resolve("pkg.mail.nothing_here").kind == SymbolKind.MISSING


def test_class_orders_asked_for_provisionally_are_not_kept(tmp_path: Path) -> None:
    """``class Member(AbstractUser)``: asked for before Django's source is read, Member's
    order ends at ``AbstractUser``, opaque. Reading Django later drops the kept order of
    ``AbstractUser``, not of Member: a lookup that early (the admin's registered models, at
    the start of classification) must keep no order, so Member's is linearised again once
    Django is read and goes on through ``PermissionsMixin`` (whose ``groups`` a receiver's
    ``instance.groups.add(g)`` is; found on the census, geonode's ``profile_post_save``)."""
    member = module(
        "app.models",
        imports={"AbstractUser": "django.contrib.auth.models.AbstractUser"},
        classes=[cls("app.models.Member", "django.contrib.auth.models.AbstractUser")],
    )
    env = find_environment(tmp_path, None, None, remember=False)
    index = SymbolIndex([member], Library(env, tmp_path))
    with index.provisional_orders():
        early = index.mro("app.models.Member")
    assert early == ["app.models.Member", "django.contrib.auth.models.AbstractUser"]
    index.resolve_in_library("django.contrib.auth.models.AbstractUser")
    assert "django.contrib.auth.models.PermissionsMixin" in index.mro("app.models.Member")


def test_a_class_order_read_before_its_library_base_is_redone_after(tmp_path: Path) -> None:
    """``class Member(AbstractUser)``: asked for before Django's source is read, Member's
    order ends at ``AbstractUser``, opaque. Once the scan reads that module (any later
    lookup may), the order goes on through Django's bases, as Python's does: the kept one
    is dropped, not served stale (it hid ``PermissionsMixin.groups`` from a receiver)."""
    member = module(
        "app.models",
        imports={"AbstractUser": "django.contrib.auth.models.AbstractUser"},
        classes=[cls("app.models.Member", "django.contrib.auth.models.AbstractUser")],
    )
    env = find_environment(tmp_path, None, None, remember=False)
    index = SymbolIndex([member], Library(env, tmp_path))
    early = index.mro("app.models.Member")
    assert early == ["app.models.Member", "django.contrib.auth.models.AbstractUser"]
    index.resolve_in_library("django.contrib.auth.models.AbstractUser")
    assert "django.contrib.auth.models.PermissionsMixin" in index.mro("app.models.Member")
