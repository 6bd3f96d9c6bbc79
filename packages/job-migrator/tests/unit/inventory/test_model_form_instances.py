"""``form.save(commit=False)`` returns the form's model instance.

Django's ``ModelForm.save()`` "creates and saves a database object from the data bound to
the form ... returns the model instance"; with ``commit=False`` it returns the instance
unsaved, and the view sets a field and calls ``instance.save()`` itself (the idiom Django's
documentation shows). The scan typed ``form.save()`` as saving the model, but not the
value ``save(commit=False)`` returns, so ``article.save()`` after it fired no receiver
and ran no ``save`` override: a view whose model posts on save had no site there.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

MODELS = """import requests
from django.db import models
from django.db.models.signals import post_save
from django.dispatch import receiver


class Article(models.Model):
    title = models.CharField(max_length=10)


class Photo(models.Model):
    url = models.URLField()

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        requests.post("https://thumbs.example.com/render", json={"url": self.url})


@receiver(post_save, sender=Article)
def announce(sender, instance, created, **kwargs):
    requests.post("https://hooks.example.com/article", json={"id": instance.pk})
"""

FORMS = """from django import forms

from app.models import Article, Photo


class ArticleForm(forms.ModelForm):
    class Meta:
        model = Article
        fields = ["title"]


class PhotoForm(forms.ModelForm):
    class Meta:
        model = Photo
        fields = ["url"]


class DraftForm(forms.ModelForm):
    class Meta:
        model = Article
        fields = ["title"]

    def save(self, commit=True):
        return {"title": self.cleaned_data["title"]}
"""

VIEWS = """from django.shortcuts import redirect

from app.forms import ArticleForm, DraftForm, PhotoForm


def create_article(request):
    form = ArticleForm(request.POST)
    if form.is_valid():
        article = form.save(commit=False)
        article.title = article.title.strip()
        article.save()
    return redirect("/")


def create_photo(request):
    form = PhotoForm(request.POST)
    photo = form.save(commit=False)
    photo.save()
    return redirect("/")


def create_draft(request):
    form = DraftForm(request.POST)
    draft = form.save(commit=False)
    draft.save()
    return redirect("/")
"""

URLS = """from django.urls import path

from app import views

urlpatterns = [
    path("a/", views.create_article),
    path("p/", views.create_photo),
    path("d/", views.create_draft),
]
"""


def _direct(scan_project: Scanner) -> set[tuple[str, int, str]]:
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/models.py": MODELS,
            "app/forms.py": FORMS,
            "app/views.py": VIEWS,
            "app/urls.py": URLS,
        }
    )
    return {
        (s.enclosing_function or "", s.location.line, s.job)
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL
    }


def test_saving_the_unsaved_instance_fires_the_models_receivers(scan_project: Scanner) -> None:
    assert ("app.views.create_article", 11, "app.models.announce") in _direct(scan_project)


def test_saving_the_unsaved_instance_runs_the_models_save(scan_project: Scanner) -> None:
    assert ("app.views.create_photo", 18, "app.models.Photo.save") in _direct(scan_project)


def test_a_form_with_its_own_save_returns_what_that_save_returns(scan_project: Scanner) -> None:
    """``DraftForm.save`` returns a dict: what the view saves is no Article."""
    assert not [s for s in _direct(scan_project) if s[0] == "app.views.create_draft"]
