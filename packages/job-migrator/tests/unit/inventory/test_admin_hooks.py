"""Django admin hooks run the registered model's own methods.

``save_model(request, obj, form, change)`` and ``delete_model(request, obj)`` of a
``ModelAdmin`` run inside the admin's requests, ``obj`` being an instance of the model the
admin is registered for (``admin.site.register(Model, Admin)``, ``@admin.register(Model)``,
a custom ``AdminSite``'s ``register``); Django's defaults call ``obj.save()`` and
``obj.delete()`` (its admin documentation). The scan knew the hooks as handlers but not
``obj``'s class, so ``super().save_model(...)`` reached Django's ``save`` and a model whose
``save`` posts a webhook was no site (found in a hand-read census sample: mezzanine's
page admins).
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

MODELS = """import requests
from django.db import models


class Album(models.Model):
    name = models.CharField(max_length=10)

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        requests.post("https://hooks.example.com/album", json={"id": self.pk})

    def delete(self, *args, **kwargs):
        requests.post("https://hooks.example.com/album-gone", json={"id": self.pk})
        super().delete(*args, **kwargs)


class Photo(models.Model):
    title = models.CharField(max_length=10)

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        requests.post("https://hooks.example.com/photo", json={"id": self.pk})
"""


def _sites(scan_project: Scanner, admin: str) -> dict[tuple[str, int, str], str]:
    """(handler, line, job) -> job of each direct-call site (a call may run several jobs)."""
    inventory = scan_project(
        {"app/__init__.py": "", "app/models.py": MODELS, "app/admin.py": admin}
    )
    assert all(j.idempotency is not Idempotency.IDEMPOTENT for j in inventory.jobs)
    return {
        (s.enclosing_function or "", s.location.line, s.job): s.job
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL
    }


def test_super_save_model_runs_the_registered_models_save(scan_project: Scanner) -> None:
    sites = _sites(
        scan_project,
        """from django.contrib import admin

from app.models import Album


@admin.register(Album)
class AlbumAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        obj.name = obj.name.strip()
        super().save_model(request, obj, form, change)

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
""",
    )
    assert ("app.admin.AlbumAdmin.save_model", 10, "app.models.Album.save") in sites
    assert ("app.admin.AlbumAdmin.delete_model", 13, "app.models.Album.delete") in sites


def test_obj_is_typed_by_a_site_register_call_and_by_a_custom_site(
    scan_project: Scanner,
) -> None:
    sites = _sites(
        scan_project,
        """from django.contrib import admin
from django.contrib.admin import AdminSite

from app.models import Album, Photo


class ShopAdminSite(AdminSite):
    site_header = "Shop"


shop_site = ShopAdminSite()


class AlbumAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        obj.save()


class PhotoAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        obj.title = obj.title.strip()
        obj.save()


admin.site.register(Album, AlbumAdmin)
shop_site.register(Photo, PhotoAdmin)
""",
    )
    assert ("app.admin.AlbumAdmin.save_model", 16, "app.models.Album.save") in sites
    assert ("app.admin.PhotoAdmin.save_model", 22, "app.models.Photo.save") in sites


def test_a_hook_shared_by_admins_of_two_models_runs_either_save(scan_project: Scanner) -> None:
    """One ``save_model`` (on a base admin, reached through an override's ``super()``) for
    an Album admin and a Photo admin: Django's default saves either, so both ``save``
    overrides are sites of that call; ``obj.save()`` written in the shared hook names no
    one model (``obj`` is either)."""
    sites = _sites(
        scan_project,
        """from django.contrib import admin

from app.models import Album, Photo


class StampedAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)


class AlbumAdmin(StampedAdmin):
    def save_model(self, request, obj, form, change):
        obj.name = obj.name.strip()
        super().save_model(request, obj, form, change)


class PhotoAdmin(StampedAdmin):
    pass


admin.site.register(Album, AlbumAdmin)
admin.site.register(Photo, PhotoAdmin)
""",
    )
    shared = {job for (where, _, job) in sites if where.endswith("StampedAdmin.save_model")}
    assert shared == {"app.models.Album.save", "app.models.Photo.save"}
    # AlbumAdmin's own super() reaches StampedAdmin's hook (the job of that site), not Django's
    own = [job for (where, _, job) in sites if where.endswith(".AlbumAdmin.save_model")]
    assert own == ["app.admin.StampedAdmin.save_model"]


def test_obj_saved_in_a_shared_hook_is_typed_as_neither_model(scan_project: Scanner) -> None:
    sites = _sites(
        scan_project,
        """from django.contrib import admin

from app.models import Album, Photo


class StampedAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        obj.save()


admin.site.register(Album, StampedAdmin)
admin.site.register(Photo, StampedAdmin)
""",
    )
    assert "app.models.Album.save" not in sites.values()
    assert "app.models.Photo.save" not in sites.values()


def test_a_registration_of_a_library_or_unknown_class_types_nothing(
    scan_project: Scanner,
) -> None:
    sites = _sites(
        scan_project,
        """from django.contrib import admin
from django.contrib.auth.models import Group

from app.models import Album


class GroupAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)


admin.site.register(Group, GroupAdmin)
admin.site.register(ALBUM_MODEL, GroupAdmin)
""",
    )
    assert not [job for job in sites.values() if job.startswith("app.models.")]


def _in_model(sites: dict[tuple[str, int, str], str]) -> set[str]:
    """The model methods with sites of their own: those the admin's requests run."""
    return {where for (where, _, _) in sites if where.startswith("app.models.")}


def test_a_model_registered_without_an_admin_is_saved_and_deleted_in_the_admins_requests(
    scan_project: Scanner,
) -> None:
    """``admin.site.register(Album)``: Django's own ModelAdmin, whose ``save_model`` calls
    ``obj.save()`` and ``delete_model`` ``obj.delete()``: each override is a handler, its
    slow call a site whose job is the method. Photo is registered nowhere: no site."""
    sites = _sites(
        scan_project,
        """from django.contrib import admin

from app.models import Album

admin.site.register(Album)
""",
    )
    assert _in_model(sites) == {"app.models.Album.save", "app.models.Album.delete"}
    assert ("app.models.Album.save", 10, "app.models.Album.save") in sites
    assert ("app.models.Album.delete", 13, "app.models.Album.delete") in sites


def test_an_admin_class_without_hooks_runs_djangos_and_so_the_models_save(
    scan_project: Scanner,
) -> None:
    sites = _sites(
        scan_project,
        """from django.contrib import admin

from app.models import Album, Photo


@admin.register(Photo)
class PhotoAdmin(admin.ModelAdmin):
    list_display = ["title"]


class AlbumAdmin(admin.ModelAdmin):
    search_fields = ["name"]


admin.site.register(Album, AlbumAdmin)
""",
    )
    assert _in_model(sites) == {
        "app.models.Photo.save",
        "app.models.Album.save",
        "app.models.Album.delete",
    }


def test_a_project_hook_decides_what_runs_instead_of_djangos(scan_project: Scanner) -> None:
    """A ``save_model`` of the project's replaces Django's: one that never saves ``obj``
    makes no site in ``save``; one that calls ``super()`` reaches it through the hook (the
    site is the hook's call), never a second site in the model. Its ``delete_model`` is
    still Django's: ``delete`` runs in the admin's delete request."""
    sites = _sites(
        scan_project,
        """from django.contrib import admin

from app.models import Album, Photo


class AlbumAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        obj.name = obj.name.strip()


class PhotoAdmin(admin.ModelAdmin):
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)

    def delete_model(self, request, obj):
        pass


admin.site.register(Album, AlbumAdmin)
admin.site.register(Photo, PhotoAdmin)
""",
    )
    assert _in_model(sites) == {"app.models.Album.delete"}
    assert ("app.admin.PhotoAdmin.save_model", 13, "app.models.Photo.save") in sites


def test_a_library_model_or_a_model_without_slow_work_registered_adds_nothing(
    scan_project: Scanner,
) -> None:
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/models.py": "from django.db import models\n\n\nclass Tag(models.Model):\n"
            "    name = models.CharField(max_length=10)\n\n"
            "    def save(self, *args, **kwargs):\n"
            "        self.name = self.name.lower()\n"
            "        super().save(*args, **kwargs)\n",
            "app/admin.py": "from django.contrib import admin\n"
            "from django.contrib.auth.models import Group\n\nfrom app.models import Tag\n\n"
            "admin.site.register(Group)\nadmin.site.register(Tag)\n",
        }
    )
    assert inventory.sites == []


INLINE_ADMIN = """from django.contrib import admin

from app.models import Album, Photo


class PhotoInline(admin.TabularInline):
    model = Photo


class BaseAlbumAdmin(admin.ModelAdmin):
    inlines = [PhotoInline]


@admin.register(Album)
class AlbumAdmin(BaseAlbumAdmin):
    def save_model(self, request, obj, form, change):
        obj.name = obj.name.strip()
"""


def test_an_inline_models_rows_are_saved_by_the_admins_change_form(
    scan_project: Scanner,
) -> None:
    """``inlines = [PhotoInline]`` (here on a project base admin): Django's default
    ``save_formset`` calls ``formset.save()``, which saves each inline row and deletes the
    rows marked for deletion: Photo's ``save`` runs in Album's change-form request. Album's
    own ``save`` does not (the project ``save_model`` never saves); its ``delete`` does
    (Django's ``delete_model``)."""
    sites = _sites(scan_project, INLINE_ADMIN)
    assert _in_model(sites) == {"app.models.Photo.save", "app.models.Album.delete"}


def test_a_project_save_formset_decides_what_the_inline_rows_run(
    scan_project: Scanner,
) -> None:
    admin = INLINE_ADMIN.replace(
        "    inlines = [PhotoInline]\n",
        "    inlines = [PhotoInline]\n\n"
        "    def save_formset(self, request, form, formset, change):\n"
        "        formset.save(commit=False)\n",
    )
    sites = _sites(scan_project, admin)
    assert "app.models.Photo.save" not in _in_model(sites)
