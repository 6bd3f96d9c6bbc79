"""``self.get_object()`` in a generic view is a row of the view's model.

Django's ``SingleObjectMixin.get_object`` (``DetailView``, ``UpdateView``, ``DeleteView``)
"returns the single object that this view will display", a row of ``get_queryset()``:
``queryset``, else ``model._default_manager.all()``; DRF's ``GenericAPIView.get_object``
(its generic views and viewsets) reads ``queryset``. So ``order = self.get_object();
order.push()`` runs ``Order.push`` where the view (or a project base) says ``model = Order``
or ``queryset = Order.objects...``. ``Parcel.push`` posts, so a ``push`` the scan cannot
type stays undecided: only the typing makes the site ``Order.push``, and a view that is no
generic view, or one overriding ``get_object``, must not be typed by it.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

MODELS = (
    "import requests\n"
    "from django.db import models\n\n\n"
    "class Order(models.Model):\n"
    "    def push(self):\n"
    "        requests.put('https://partner.example/orders/%s' % self.pk)\n\n\n"
    "class Parcel(models.Model):\n"
    "    def push(self):\n"
    "        requests.post('https://partner.example/parcels')\n"
)
PUSH = (
    "    def post(self, request, *args, **kwargs):\n"
    "        item = self.get_object()\n"
    "        item.push()\n"
    "        return HttpResponse('ok')\n"
)


def _site_jobs(scan_project: Scanner, views: str) -> list[str]:
    urls = (
        "from django.urls import path\n"
        "from app import views\n\n"
        "urlpatterns = [path('x/<int:pk>', views.V.as_view())]\n"
    )
    files = {
        "app/__init__.py": "",
        "app/models.py": MODELS,
        "app/views.py": views,
        "app/urls.py": urls,
    }
    inventory = scan_project(files)
    return [s.job for s in inventory.sites if s.location.path == "app/views.py"]


def test_a_django_detail_view_s_object_is_its_model(scan_project: Scanner) -> None:
    views = (
        "from django.http import HttpResponse\n"
        "from django.views.generic import DetailView\n"
        "from app.models import Order\n\n\n"
        "class V(DetailView):\n"
        "    model = Order\n\n" + PUSH
    )

    assert _site_jobs(scan_project, views) == ["app.models.Order.push"]


def test_a_drf_view_s_object_is_its_queryset_s_model_declared_on_a_project_base(
    scan_project: Scanner,
) -> None:
    views = (
        "from django.http import HttpResponse\n"
        "from rest_framework import generics\n"
        "from app.models import Order\n\n\n"
        "class Base(generics.RetrieveUpdateAPIView):\n"
        "    queryset = Order.objects.filter(open=True).select_related('customer')\n\n\n"
        "class V(Base):\n" + PUSH
    )

    assert _site_jobs(scan_project, views) == ["app.models.Order.push"]


def test_a_view_that_is_no_generic_view_is_not_typed_by_its_model_attribute(
    scan_project: Scanner,
) -> None:
    # a plain View (or DRF's ViewSet) has no get_object: what a mixin of the project's
    # own, unread, returns is not the model
    for base, module in (("View", "django.views"), ("ViewSet", "rest_framework.viewsets")):
        views = (
            "from django.http import HttpResponse\n"
            f"from {module} import {base}\n"
            "from app.models import Order\n\n\n"
            f"class V({base}):\n"
            "    model = Order\n\n" + PUSH
        )

        assert "app.models.Order.push" not in _site_jobs(scan_project, views), base


def test_an_overridden_get_object_returns_what_it_returns(scan_project: Scanner) -> None:
    views = (
        "from django.http import HttpResponse\n"
        "from django.views.generic import DetailView\n"
        "from app.models import Order, Parcel\n\n\n"
        "class V(DetailView):\n"
        "    model = Order\n\n"
        "    def get_object(self, queryset=None) -> Parcel:\n"
        "        return Parcel.objects.get(pk=self.kwargs['pk'])\n\n" + PUSH
    )

    assert "app.models.Order.push" not in _site_jobs(scan_project, views)
