"""Request handlers of the other web frameworks, each by its documented registration API.

Quart, Sanic, Litestar, aiohttp and Bottle route by a decorator named for the HTTP verb
(on an app, a blueprint, a route table, or the package's own function); aiohttp also
by ``app.router.add_post(path, handler)`` and class-based ``web.View``; Tornado by a
``RequestHandler`` subclass's verb methods; Falcon by a resource's ``on_<verb>``
responders; Pyramid by ``@view_config`` and ``config.add_view``. A handler's slow call
is a site as in Flask or Django; the framework is named in ``handler``.
"""

from __future__ import annotations

from inventory.detector_examples._model import F, example
from inventory.models import Pattern

_NOTIFY = """
import requests

def notify(order_id):
    requests.post("https://hooks.example.com/orders", json={"id": order_id})
"""

FRAMEWORKS = [
    example(
        Pattern.DIRECT_CALL,
        "Quart, Sanic and Litestar: async route decorators",
        [("app.notify", F), ("app.notify", F), ("app.notify", F)],
        "`@app.post` on a `Quart` app (Flask's API, async) or a `Sanic` app, and Litestar's "
        "`@post(...)` route handler decorator: each function is a request handler, and the "
        "POST it makes through `notify` is slow work in the request.",
        _NOTIFY
        + """
from litestar import post
from quart import Quart
from sanic import Sanic, response

quart_app = Quart(__name__)
sanic_app = Sanic("shop")

@quart_app.post("/q/<oid>")
async def ship_quart(oid):
    notify(oid)
    return "ok"

@sanic_app.post("/s/<oid>")
async def ship_sanic(request, oid):
    notify(oid)
    return response.text("ok")

@post("/l/{oid:int}")
async def ship_litestar(oid: int) -> str:
    notify(oid)
    return "ok"
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "aiohttp: a route table, a router registration and a class-based view",
        [("app.notify", F), ("app.notify", F), ("app.notify", F)],
        "`routes = web.RouteTableDef()` then `@routes.post(...)`; `app.router.add_post(path, "
        "handler)` for a handler with no decorator; a `web.View` subclass's `post`.",
        _NOTIFY
        + """
from aiohttp import web

routes = web.RouteTableDef()

@routes.post("/a/{id}")
async def ship(request):
    notify(request.match_info["id"])
    return web.Response(text="ok")

async def cancel(request):
    notify(request.match_info["id"])
    return web.Response(text="ok")

class Refund(web.View):
    async def post(self):
        notify(self.request.match_info["id"])
        return web.Response(text="ok")

app = web.Application()
app.add_routes(routes)
app.router.add_post("/c/{id}", cancel)
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "Bottle, Tornado and Falcon",
        [("app.notify", F), ("app.notify", F), ("app.notify", F)],
        "Bottle's `@app.post` on a `Bottle()`; a Tornado `RequestHandler`'s `post` (its other "
        "methods are not handlers); a Falcon resource's `on_post` responder, in a module that "
        "imports falcon.",
        _NOTIFY
        + """
import falcon
import tornado.web
from bottle import Bottle

bottle_app = Bottle()

@bottle_app.post("/b/<oid>")
def ship_bottle(oid):
    notify(oid)
    return "ok"

class ShipHandler(tornado.web.RequestHandler):
    def post(self, oid):
        notify(oid)

    def audit(self, oid):
        notify(oid)

class ShipResource:
    def on_post(self, req, resp, oid):
        notify(oid)
        resp.status = falcon.HTTP_202
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "Pyramid: view_config, and add_view in the app's configuration",
        [("app.notify", F), ("app.notify", F)],
        "`@view_config(route_name=...)` registers a view callable; `config.add_view(view, "
        "route_name=...)` in the app's `main` registers one with no decorator.",
        _NOTIFY
        + """
from pyramid.view import view_config

@view_config(route_name="ship", request_method="POST", renderer="json")
def ship(request):
    notify(request.matchdict["oid"])
    return {}

def cancel(request):
    notify(request.matchdict["oid"])
    return {}
""",
        {
            "wsgi.py": """
from pyramid.config import Configurator

from app import cancel

def main(global_config, **settings):
    config = Configurator(settings=settings)
    config.add_route("cancel", "/cancel/{oid}")
    config.add_view(cancel, route_name="cancel", request_method="POST")
    return config.make_wsgi_app()
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "Falcon: a resource registered by add_route in the app's module",
        [("app.notify", F)],
        "`app.add_route(uri, OrderResource(db))` takes an instance: the class it builds is "
        "the resource, and its `on_<verb>` responders serve the route, also when the "
        "resource's own module does not import falcon. Its other methods are not handlers.",
        _NOTIFY
        + """
class OrderResource:
    def __init__(self, db):
        self.db = db

    def on_post(self, req, resp, oid):
        notify(oid)

    def audit(self, oid):
        notify(oid)
""",
        {
            "wsgi.py": """
import falcon

from app import OrderResource

def create_app(db):
    api = falcon.App()
    api.add_route("/orders/{oid}", OrderResource(db))
    return api
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: on_post outside Falcon, a verb-named decorator beside an aiohttp client",
        [],
        "`on_post` names a Falcon responder only in a module that imports falcon; aiohttp is as "
        "often an HTTP client as a server, so its import alone does not make `@cache.get(...)` "
        "a route.",
        """
import aiohttp

from shop.cache import cache

class Listener:
    def on_post(self, req, resp):
        aiohttp.request("POST", "https://hooks.example.com")

@cache.get("orders")
async def orders():
    async with aiohttp.ClientSession() as session:
        await session.post("https://hooks.example.com/orders")
""",
    ),
]
