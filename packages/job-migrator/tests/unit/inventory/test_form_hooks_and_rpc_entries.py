"""Entry points a framework reaches from a request without a route naming them (census
sample of 2026-12-02): form, field and serializer hooks run while a handler validates or
saves what was posted, django-modern-rpc procedures, and calls through a parameter whose
default is the class or function (``form_class=SignupForm``). Reproductions written from
each framework's documented API."""

from __future__ import annotations

import textwrap

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import Framework, Pattern


def handlers(source: str, module: str = "shop.forms") -> dict[str, Framework | None]:
    summary = extract_source(textwrap.dedent(source), "x.py", module)
    return {f.qualname.removeprefix(f"{module}."): f.handler for f in summary.functions}


def direct(source: str) -> list[tuple[str, str]]:
    """(job, target as written) of the direct_call sites of a one-file app."""
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    sites, _ = classify([summary], MigratorConfig(), Catalogue.load(), None)
    return [(s.job, s.target_source) for s in sites if s.pattern is Pattern.DIRECT_CALL]


def test_django_form_and_field_validation_hooks_run_in_the_request() -> None:
    found = handlers(
        """
        from django import forms

        class CaptchaField(forms.Field):
            def validate(self, value): ...
            def widget_attrs(self, widget): ...

        class SignupForm(forms.ModelForm):
            def clean_email(self): ...
            def clean(self): ...
            def save(self, commit=True): ...
            def helper(self): ...
            def clean_(self): ...

        class InviteForm(SignupForm):
            def clean_code(self): ...
        """
    )
    assert found == {
        "CaptchaField.validate": Framework.DJANGO,
        "CaptchaField.widget_attrs": None,
        "SignupForm.clean_email": Framework.DJANGO,
        "SignupForm.clean": Framework.DJANGO,
        "SignupForm.save": Framework.DJANGO,
        "SignupForm.helper": None,
        "SignupForm.clean_": None,
        "InviteForm.clean_code": Framework.DJANGO,
    }


def test_drf_serializer_hooks_run_in_the_request() -> None:
    found = handlers(
        """
        from rest_framework import serializers

        class OrderSerializer(serializers.ModelSerializer):
            def validate_total(self, value): ...
            def create(self, validated_data): ...
            def update(self, instance, validated_data): ...
            def to_representation(self, instance): ...
            def price(self): ...
        """
    )
    assert found == {
        "OrderSerializer.validate_total": Framework.DJANGO,
        "OrderSerializer.create": Framework.DJANGO,
        "OrderSerializer.update": Framework.DJANGO,
        "OrderSerializer.to_representation": Framework.DJANGO,
        "OrderSerializer.price": None,
    }


@pytest.mark.parametrize(("flask", "expected"), [(True, Framework.FLASK), (False, None)])
def test_wtforms_hooks_are_flask_handlers_in_a_flask_file(
    flask: bool, expected: Framework | None
) -> None:
    found = handlers(
        ("from flask import current_app\n" if flask else "")
        + textwrap.dedent(
            """
            from wtforms import fields, Form

            class UploadField(fields.FileField):
                def populate_obj(self, obj, name): ...
                def pre_validate(self, form): ...

            class ProfileForm(Form):
                def validate_name(self, field): ...
                def render(self): ...
            """
        )
    )
    assert found == {
        "UploadField.populate_obj": expected,
        "UploadField.pre_validate": expected,
        "ProfileForm.validate_name": expected,
        "ProfileForm.render": None,
    }


def test_a_class_merely_named_form_is_no_form() -> None:
    found = handlers(
        """
        class Form:
            def clean(self): ...

        class SignupForm(Form):
            def save(self): ...
        """
    )
    assert found == {"Form.clean": None, "SignupForm.save": None}


def test_a_field_clean_posting_to_a_captcha_service_is_slow_work_of_the_request() -> None:
    sites = direct(
        """
        import requests
        from django import forms

        class RecaptchaField(forms.Field):
            def clean(self, value):
                answer = requests.post("https://captcha.example/verify", data={"r": value})
                return answer.json()
        """
    )
    assert sites == [("app.RecaptchaField.clean", "requests.post")]


@pytest.mark.parametrize(
    "source",
    [
        """
        from modernrpc.core import rpc_method

        @rpc_method(name="Bug.report")
        def report(execution_id): ...
        """,
        """
        from django.conf import settings
        from modernrpc.server import RpcServer

        server = RpcServer()

        @server.register_procedure
        def report(execution_id): ...
        """,
    ],
)
def test_modernrpc_procedures_are_django_handlers(source: str) -> None:
    assert handlers(source, "shop.rpc")["report"] == Framework.DJANGO


def test_a_call_through_a_parameter_defaulting_to_a_class_resolves_to_it() -> None:
    sites = direct(
        """
        import requests
        from django import forms

        class ThemeForm(forms.Form):
            def deploy(self):
                requests.post("https://deploy.example/hook")

        def edit(request, form_class=ThemeForm):
            form = form_class(request.POST)
            form.deploy()
        """
    )
    assert sites == [("app.ThemeForm.deploy", "form.deploy")]


def test_a_call_through_a_parameter_defaulting_to_a_function_resolves_to_it() -> None:
    summary = extract_source(
        textwrap.dedent(
            """
            def fit(image): ...

            def save_thumbnail(image, algorithm=fit, size=None):
                return algorithm(image)
            """
        ),
        "x.py",
        "app",
    )
    (save,) = [f for f in summary.functions if f.name == "save_thumbnail"]
    assert [c.target for c in save.calls] == ["app.fit"]
