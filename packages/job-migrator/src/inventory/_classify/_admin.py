"""Django's admin: the model each ``ModelAdmin`` is registered for, and what its hooks do.

A ``ModelAdmin``'s ``save_model(request, obj, form, change)`` and ``delete_model(request,
obj)`` run inside the admin's change-form and delete requests (``_handlers.ADMIN_METHODS``
makes them handlers); ``obj`` is an instance of the model the class is registered for,
with ``admin.site.register(Model, ModelAdmin)``, ``@admin.register(Model)`` or a custom
``AdminSite``'s ``register`` (Django's admin documentation). The defaults the documentation
gives run the model's own method: "The default implementation of ``save_model`` calls
``obj.save()``", ``delete_model`` ``obj.delete()``. So ``super().save_model(request, obj,
form, change)`` in a project admin runs the registered model's ``save`` override.
"""

from __future__ import annotations

import re

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory.summary import CallInfo, FileSummary

# ``ModelAdmin`` hook -> the model method its default implementation calls on ``obj``.
ADMIN_DEFAULTS = {"save_model": "save", "delete_model": "delete"}
# Where the hooks are defined in Django (re-exported as ``django.contrib.admin.ModelAdmin``).
_MODEL_ADMINS = ("django.contrib.admin.ModelAdmin", "django.contrib.admin.options.ModelAdmin")
DEFAULT_HOOKS = frozenset(f"{a}.{hook}" for a in _MODEL_ADMINS for hook in ADMIN_DEFAULTS)
# ``admin.site.register(...)`` / ``@admin.register(...)``, and an ``AdminSite``'s own.
_REGISTERS = frozenset(
    {
        "django.contrib.admin.site.register",
        "django.contrib.admin.sites.site.register",
        "django.contrib.admin.register",
        "django.contrib.admin.decorators.register",
    }
)
_SITES = frozenset({"django.contrib.admin.AdminSite", "django.contrib.admin.sites.AdminSite"})
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
# The admin of ``admin.site.register(Model)``, without a ModelAdmin of the project's.
DEFAULT_ADMIN = _MODEL_ADMINS[0]


def admin_models(summaries: list[FileSummary], index: SymbolIndex) -> dict[str, list[str]]:
    """Project ``ModelAdmin`` class -> the project models it is registered for
    (``DEFAULT_ADMIN``: the models registered without one)."""
    found: dict[str, list[str]] = {}
    for summary in summaries:
        classes = sorted(summary.classes, key=lambda c: c.span.line)
        for call in summary.module_calls:
            if not _registers(call, index):
                continue
            models = _models(call, summary, index)
            if _is_decorator(call):
                # ``@admin.register(Model)``: the class defined right below the decorator
                below = next((c for c in classes if c.span.line > call.span.line), None)
                admin = below.qualname if below is not None else None
            elif len(call.args) > 1:
                admin = _class(call.arg_sources[1], summary, index)
            else:
                admin = DEFAULT_ADMIN  # ``admin.site.register(Model)``: Django's own ModelAdmin
            if admin is None:
                continue
            for model in models:
                found.setdefault(admin, [])
                if model not in found[admin]:
                    found[admin].append(model)
    return found


def admin_saved(index: SymbolIndex, registered: dict[str, list[str]]) -> list[str]:
    """The project model methods the admin's requests run through its default hooks: for
    each model registered with an admin whose ``save_model`` (``delete_model``) is Django's
    own, no project override along its MRO, the model's ``save`` (``delete``), its own or a
    project base's. An override that calls ``super().save_model(...)`` reaches the model's
    method through the call graph instead (``CallGraph``); one that does not, decides."""
    found: list[str] = []
    for admin, models in sorted(registered.items()):
        for hook, method in ADMIN_DEFAULTS.items():
            if admin != DEFAULT_ADMIN and _project_hook(index, admin, hook) is not None:
                continue
            _add_methods(index, models, method, found)
        if admin != DEFAULT_ADMIN and _project_hook(index, admin, _FORMSET_HOOK) is None:
            # Django's save_formset: formset.save() saves each inline row (its form's
            # instance.save()) and deletes the rows marked for deletion (obj.delete()).
            inline_models = _inline_models(index, admin)
            for method in ADMIN_DEFAULTS.values():
                _add_methods(index, inline_models, method, found)
    return found


_FORMSET_HOOK = "save_formset"


def _add_methods(index: SymbolIndex, models: list[str], method: str, found: list[str]) -> None:
    for model in models:
        qualname = index.method(model, method)
        library = qualname is None or index.is_library(qualname)
        if qualname is not None and not library and qualname not in found:
            found.append(qualname)


def _inline_models(index: SymbolIndex, admin: str) -> list[str]:
    """The models of the admin's ``inlines`` (its own, or a project base's): each inline
    class's ``model = X``, a project model."""
    inlines = next(
        (i.inlines for owner in index.mro(admin) if (i := index.classes.get(owner)) and i.inlines),
        [],
    )
    models: list[str] = []
    for name in inlines:
        inline = index.resolve(name)
        info = index.classes.get(inline.name) if inline.kind == SymbolKind.CLASS else None
        model = index.resolve(info.view_model) if info is not None and info.view_model else None
        if model is not None and model.kind == SymbolKind.CLASS and model.name in index.classes:
            models.append(model.name)
    return models


def _project_hook(index: SymbolIndex, admin: str, hook: str) -> str | None:
    for owner in index.mro(admin):
        fn = index.functions.get(f"{owner}.{hook}")
        if fn is not None and not index.is_library(fn.qualname):
            return fn.qualname
    return None


def admin_hooks(index: SymbolIndex, registered: dict[str, list[str]]) -> dict[str, list[str]]:
    """Hook function -> the models its ``obj`` may be: every project ``save_model`` /
    ``delete_model`` along a registered admin's MRO (an override's ``super()`` hands ``obj``
    on), with the models of every admin that runs it (a base admin's hook serves many)."""
    found: dict[str, list[str]] = {}
    for admin, models in sorted(registered.items()):
        if admin == DEFAULT_ADMIN:
            continue  # Django's own hooks: ``admin_saved``
        for hook in ADMIN_DEFAULTS:
            for owner in index.mro(admin):
                fn = index.functions.get(f"{owner}.{hook}")
                if fn is None or index.is_library(fn.qualname) or "obj" not in fn.params:
                    continue
                kept = found.setdefault(fn.qualname, [])
                kept += [m for m in models if m not in kept]
    return found


def _registers(call: CallInfo, index: SymbolIndex) -> bool:
    if call.target in _REGISTERS:
        return True
    owner, _, method = call.target.rpartition(".")
    if method != "register" or not owner:
        return False
    site = index.resolve(owner)
    return site.kind == SymbolKind.CLASS and any(b in _SITES for b in index.mro(site.name))


def _models(call: CallInfo, summary: FileSummary, index: SymbolIndex) -> list[str]:
    """``register(Model, admin)``, ``register([A, B], admin)``, ``@admin.register(A, B)``."""
    written = call.arg_sources if _is_decorator(call) else call.arg_sources[:1]
    names: list[str] = []
    for text in (t.strip() for t in written):
        if text.startswith(("[", "(")) and text.endswith(("]", ")")):
            names += [part.strip() for part in text[1:-1].split(",") if part.strip()]
        else:
            names.append(text)
    # Not ``index.is_model``: asked this early (before the classifier reads a library
    # base's source) it would settle the index's set of models too soon; the admin's
    # ``register`` takes models only, and a class without a project ``save`` adds nothing.
    models = [_class(name, summary, index) for name in names]
    return [m for m in models if m is not None]


def _is_decorator(call: CallInfo) -> bool:
    """``@admin.register(...)`` (not ``admin.site.register``): it names models only."""
    return call.target.endswith(("admin.register", "decorators.register"))


def _class(written: str, summary: FileSummary, index: SymbolIndex) -> str | None:
    """The project class a module-level name stands for, None for anything else."""
    if not _NAME.match(written):
        return None
    found = index.resolve(f"{summary.module}.{written}")
    if found.kind != SymbolKind.CLASS or found.name not in index.classes:
        return None
    return None if index.is_library(found.name) else found.name
