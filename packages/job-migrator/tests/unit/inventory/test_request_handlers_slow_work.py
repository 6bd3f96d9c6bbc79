"""Request handlers of more frameworks, and the slow work they do inline (issue 10).

Small reproductions of shapes seen in real apps: Flask-RESTful resources that mail
through ``current_app.mail``, hooks of another module's Django view, FormView forms,
DRF serializers, outbound HTTP by verb.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from inventory import scan
from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import EffectKind, Framework, Inventory, Pattern


def handlers(source: str, module: str = "shop.api") -> dict[str, Framework | None]:
    summary = extract_source(textwrap.dedent(source), "x.py", module)
    return {f.qualname.removeprefix(f"{module}."): f.handler for f in summary.functions}


def targets(source: str, function: str, module: str = "shop.views") -> list[str]:
    summary = extract_source(textwrap.dedent(source), "x.py", module)
    (found,) = [f for f in summary.functions if f.qualname == f"{module}.{function}"]
    return [call.target for call in found.calls]


def direct(source: str) -> list[tuple[str, int, str]]:
    """(job, line, target as written) of the direct_call sites of a one-file app."""
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    sites, _ = classify([summary], MigratorConfig(), Catalogue.load(), None)
    return [
        (s.job, s.location.line, s.target_source) for s in sites if s.pattern is Pattern.DIRECT_CALL
    ]


def scanned(tmp_path: Path, files: dict[str, str]) -> Inventory:
    for rel, text in {"app/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan(tmp_path, use_cache=False, jobs=1)


# -- which functions are handlers -------------------------------------------------------


@pytest.mark.parametrize("package", ["flask_restful", "flask_restx"])
def test_resource_methods_are_flask_handlers(package: str) -> None:
    found = handlers(
        f"""
        from {package} import Resource

        class Projects(Resource):
            method_decorators = []

            def get(self, project_id): ...
            def post(self): ...
            def _load(self): ...
        """
    )
    assert found == {
        "Projects.get": Framework.FLASK,
        "Projects.post": Framework.FLASK,
        "Projects._load": None,
    }


def test_dispatch_request_of_a_flask_view() -> None:
    found = handlers(
        """
        from flask.views import View

        class Page(View):
            def dispatch_request(self, slug): ...
        """
    )
    assert found["Page.dispatch_request"] is Framework.FLASK


def test_public_methods_of_another_modules_view_are_hooks_it_calls() -> None:
    """The base (another module) calls ``register`` from its ``form_valid``: a view instance
    lives for one request, so its public methods run inside it."""
    found = handlers(
        """
        from django.conf import settings

        from accounts.views import BaseSignupView

        class SignupView(BaseSignupView):
            def register(self, form): ...
            def send_activation(self, user): ...
            def _unused(self): ...

            @classmethod
            def configure(cls): ...
        """
    )
    assert found["SignupView.register"] is Framework.DJANGO
    assert found["SignupView.send_activation"] is Framework.DJANGO
    assert found["SignupView._unused"] is None
    assert found["SignupView.configure"] is None


def test_a_view_name_alone_makes_no_hooks_without_a_web_framework() -> None:
    found = handlers(
        """
        from widgets.tree import TreeView

        class Files(TreeView):
            def refresh(self): ...
        """
    )
    assert found["Files.refresh"] is None


def test_under_the_frameworks_own_base_only_known_hooks_are_handlers() -> None:
    found = handlers(
        """
        from django.views.generic import FormView

        class Contact(FormView):
            def form_valid(self, form): ...
            def render_extra(self): ...
        """
    )
    assert found["Contact.form_valid"] is Framework.DJANGO
    assert found["Contact.render_extra"] is None


def test_the_hooks_djangos_generic_views_call_in_the_request_are_handlers() -> None:
    """Django's method flowcharts: TemplateView.get calls get_context_data, CreateView's get
    and post call get_initial and get_form_kwargs, DRF's generic views get_queryset and
    get_serializer_context. An override of one runs inside the request."""
    found = handlers(
        """
        from django.views.generic import CreateView, TemplateView
        from rest_framework.generics import ListAPIView

        class Events(TemplateView):
            def get_context_data(self, **kwargs): ...
            def latest(self): ...

        class NewProvider(CreateView):
            def get_initial(self): ...
            def get_form_kwargs(self): ...
            def get_success_url(self): ...

        class Orders(ListAPIView):
            def get_queryset(self): ...
            def get_serializer_context(self): ...
        """
    )
    assert found["Events.get_context_data"] is Framework.DJANGO
    assert found["Events.latest"] is None
    for hook in ("get_initial", "get_form_kwargs", "get_success_url"):
        assert found[f"NewProvider.{hook}"] is Framework.DJANGO, hook
    assert found["Orders.get_queryset"] is Framework.DJANGO
    assert found["Orders.get_serializer_context"] is Framework.DJANGO


def test_djangos_hook_names_are_not_hooks_of_a_flask_view() -> None:
    found = handlers(
        """
        from flask.views import MethodView

        class Page(MethodView):
            def get(self): ...
            def get_context_data(self): ...
        """
    )
    assert found["Page.get"] is Framework.FLASK
    assert found["Page.get_context_data"] is None


def test_slow_work_in_a_generic_views_hook_is_reported(tmp_path: Path) -> None:
    """ephios' ExternalEventListView fetches other instances' events in get_context_data, and
    its URLconf registers it in another module: the fetch is slow work in the request."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "views.py").write_text(
        textwrap.dedent(
            """
            import requests
            from django.views.generic import TemplateView

            from shop.mixins import StaffMixin


            class Events(StaffMixin, TemplateView):
                template_name = "events.html"

                def get_context_data(self, **kwargs):
                    context = super().get_context_data(**kwargs)
                    context["events"] = requests.get("https://peer.example.com/api/events").json()
                    return context
            """
        )
    )
    (tmp_path / "shop" / "mixins.py").write_text("class StaffMixin:\n    pass\n")
    (tmp_path / "shop" / "urls.py").write_text(
        "from django.urls import path\n\nfrom shop import views\n\n"
        'urlpatterns = [path("events/", views.Events.as_view())]\n'
    )
    found = scan(tmp_path, use_cache=False, jobs=1)
    fetches = [
        s for s in found.sites if s.enclosing_function == "shop.views.Events.get_context_data"
    ]
    assert fetches, [(s.job, s.enclosing_function) for s in found.sites]
    assert all(s.handler is Framework.DJANGO for s in fetches), [
        (s.job, s.pattern) for s in fetches
    ]
    assert [(s.pattern, s.target_source) for s in fetches] == [
        (Pattern.DIRECT_CALL, "requests.get")
    ]


# -- what a view's parameters are ------------------------------------------------------


def test_form_valid_form_is_the_views_form_class() -> None:
    source = """
        from django.views.generic.edit import FormView

        from shop.forms import InviteForm

        class Base(FormView):
            form_class = InviteForm

        class Invite(Base):
            def form_valid(self, form):
                form.save()

        class Annotated(FormView):
            form_class = InviteForm

            def form_valid(self, form: "OtherForm"):
                form.save()
        """
    assert targets(source, "Invite.form_valid") == ["shop.forms.InviteForm.save"]
    assert targets(source, "Annotated.form_valid") == ["shop.views.OtherForm.save"]


def test_perform_create_serializer_is_the_views_serializer_class() -> None:
    source = """
        from rest_framework import viewsets

        from shop.serializers import TicketSerializer

        class Tickets(viewsets.ModelViewSet):
            serializer_class = TicketSerializer

            def perform_create(self, serializer):
                serializer.save()
        """
    assert targets(source, "Tickets.perform_create") == ["shop.serializers.TicketSerializer.save"]


def test_a_form_parameter_outside_a_view_stays_untyped() -> None:
    source = """
        from shop.forms import InviteForm

        class Helper:
            form_class = InviteForm

            def run(self, form):
                form.save()
        """
    assert targets(source, "Helper.run") == ["?.save"]


# -- slow work found ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("send", "api"),
    [
        ("current_app.mail.send(message)", "flask.current_app.mail.send"),
        ('current_app.extensions["mail"].send(message)', 'current_app.extensions["mail"].send'),
        ("mail.send(message)", "flask_mail.Mail.send"),
    ],
)
def test_flask_mail_the_ways_apps_reach_it(send: str, api: str) -> None:
    found = direct(
        f"""
        from flask import Blueprint, current_app
        from flask_mail import Mail

        bp = Blueprint("b", __name__)
        mail = Mail()

        @bp.route("/remind", methods=["POST"])
        def remind():
            message = None
            {send}
        """
    )
    assert found == [("app.remind", 11, api)]


def test_a_send_on_something_else_is_not_mail() -> None:
    found = direct(
        """
        from flask import Blueprint, current_app

        bp = Blueprint("b", __name__)

        @bp.post("/ping")
        def ping():
            current_app.bus.send("ping")
        """
    )
    assert found == []


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        ("requests.Session().patch(url)", EffectKind.HTTP_PATCH),
        ('httpx.request("GET", url)', EffectKind.HTTP_GET),
        ('urllib3.PoolManager().request("POST", url)', EffectKind.HTTP_POST),
        ("aiohttp.ClientSession().post(url)", EffectKind.HTTP_POST),
    ],
)
def test_outbound_http_by_verb(call: str, kind: EffectKind) -> None:
    source = f"""
        import aiohttp
        import httpx
        import requests
        import urllib3
        from fastapi import APIRouter

        router = APIRouter()

        @router.post("/hook")
        async def hook(url: str):
            {call}
        """
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    sites, jobs = classify([summary], MigratorConfig(), Catalogue.load(), None)
    assert [(s.job, s.pattern) for s in sites] == [("app.hook", Pattern.DIRECT_CALL)]
    assert kind in {effect.kind for effect in jobs[0].effects}


def test_django_user_email_user_two_calls_down_from_a_view_hook(tmp_path: Path) -> None:
    """The base view of another module calls ``register``; the mail is ``user.email_user``."""
    inventory = scanned(
        tmp_path,
        {
            "app/base.py": """
                from django.views.generic.edit import FormView

                class BaseSignupView(FormView):
                    def form_valid(self, form):
                        return self.register(form)

                    def register(self, form):
                        raise NotImplementedError
                """,
            "app/views.py": """
                from django.conf import settings

                from app.base import BaseSignupView

                class SignupView(BaseSignupView):
                    def register(self, form):
                        user = form.save()
                        self.activate(user)
                        return user

                    def activate(self, user):
                        notify(user)

                def notify(user):
                    user.email_user("Activate", "...", settings.DEFAULT_FROM_EMAIL)
                """,
        },
    )
    found = {(s.location.path, s.location.line, s.job) for s in inventory.sites}
    assert ("app/views.py", 9, "app.views.SignupView.activate") in found
    assert ("app/views.py", 13, "app.views.notify") in found
    jobs = {job.qualname: job for job in inventory.jobs}
    assert EffectKind.EMAIL_SEND in {e.kind for e in jobs["app.views.notify"].effects}


def test_flask_restful_resource_registered_in_another_module(tmp_path: Path) -> None:
    """The factory stores the Mail on the app; a Resource registered elsewhere mails."""
    inventory = scanned(
        tmp_path,
        {
            "app/run.py": """
                from flask import Flask
                from flask_mail import Mail

                def create_app():
                    app = Flask(__name__)
                    mail = Mail()
                    mail.init_app(app)
                    app.mail = mail
                    return app
                """,
            "app/utils.py": """
                import smtplib

                from flask import current_app

                def send_email(message):
                    try:
                        current_app.mail.send(message)
                    except smtplib.SMTPException:
                        return False
                    return True
                """,
            "app/resources.py": """
                from flask_restful import Resource

                from app.utils import send_email

                class Projects(Resource):
                    def post(self):
                        send_email(None)
                        return "", 201
                """,
            "app/api.py": """
                from flask import Blueprint
                from flask_restful import Api

                from app.resources import Projects

                bp = Blueprint("api", __name__)
                Api(bp).add_resource(Projects, "/projects")
                """,
        },
    )
    found = [(s.location.path, s.job, s.idempotency) for s in inventory.sites]
    assert found == [("app/resources.py", "app.utils.send_email", "non_idempotent")]


def test_mail_words_on_a_receiver_of_unknown_type() -> None:
    """An adapter loaded from a setting: its type is unknown, its method names the mail. A
    project function with such a name is judged by its body (empty here: nothing slow)."""
    found = direct(
        """
        from django.views.generic import View

        from shop.adapters import load_adapter

        def notify(user):
            adapter = load_adapter()
            adapter.send_confirmation_mail(user)

        def send_welcome_mail(user): ...

        class Confirm(View):
            def post(self, request):
                notify(request.user)
                send_welcome_mail(request.user)
        """
    )
    assert found == [("app.notify", 14, "notify")]


@pytest.mark.parametrize(
    ("method", "kind"),
    [
        ("users_lookupByEmail", EffectKind.HTTP_GET),
        ("conversations_list", EffectKind.HTTP_GET),
        ("chat_postMessage", EffectKind.HTTP_POST),
    ],
)
def test_slack_web_api_reads_and_posts(method: str, kind: EffectKind) -> None:
    source = f"""
        from flask import Blueprint
        from slack_sdk import WebClient

        bp = Blueprint("b", __name__)

        @bp.get("/slack")
        def slack(client: WebClient):
            client.{method}(email="a@example.com")
        """
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    sites, jobs = classify([summary], MigratorConfig(), Catalogue.load(), None)
    assert [(s.job, s.pattern) for s in sites] == [("app.slack", Pattern.DIRECT_CALL)]
    assert {effect.kind for effect in jobs[0].effects} == {kind}


def test_a_default_with_or_keeps_the_type() -> None:
    source = """
        import requests
        from slack_sdk import WebClient

        def make_client() -> WebClient: ...

        def lookup(email, client: WebClient = None):
            client = client or make_client()
            client.users_lookupByEmail(email=email)

        def mixed(session: requests.Session, client: WebClient):
            either = session or client
            either.post("x")
        """
    assert targets(source, "lookup")[-1] == "slack_sdk.WebClient.users_lookupByEmail"
    # Both operands typed: their union (tests/unit/inventory/test_union_types.py).
    assert targets(source, "mixed") == ["__union__.requests:Session|slack_sdk:WebClient.post"]
