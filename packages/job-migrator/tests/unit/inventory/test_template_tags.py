"""Django template tags, filters and ``Node.render`` are entry points: Django calls them
while a template renders, inside the request (its "custom template tags and filters" guide:
``register = template.Library()``, ``@register.simple_tag`` / ``filter`` /
``inclusion_tag`` / ``simple_block_tag`` / ``tag``, and a ``Node`` whose ``render(context)``
the template calls). The adversaries: a project's own ``register`` object, a class named
``Node`` that is no template node, and a tag module that only formats text.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Framework, Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

TAGS = """
import requests
from django import template
from django.template import Library
from django.template.base import Node

register = template.Library()
other = Library()


@register.simple_tag
def fan_count(url):
    return requests.get(url).json()["count"]


@other.inclusion_tag("box.html")
def box(url):
    return {"text": requests.get(url).text}


@register.filter(name="shout")
def shout(text):
    return text.upper()


class Base(Node):
    pass


class FanNode(Base):
    def __init__(self, url):
        self.url = url

    def render(self, context):
        return requests.get(self.url).text


@register.tag
def fans(parser, token):
    return FanNode(token.split_contents()[1])
"""
DECOYS = """
import ast

import requests

from app.plugins import Registry

register = Registry()


@register.filter
def fetch(url):
    return requests.get(url).text


class Node(ast.NodeVisitor):
    def render(self, url):
        return requests.get(url).text
"""
PLUGINS = """
class Registry:
    def filter(self, fn):
        return fn
"""


def _direct(scan_project: Scanner) -> dict[str, Framework | None]:
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/plugins.py": PLUGINS,
            "app/decoys.py": DECOYS,
            "app/templatetags/__init__.py": "",
            "app/templatetags/fans.py": TAGS,
        }
    )
    return {s.job: s.handler for s in inventory.sites if s.pattern is Pattern.DIRECT_CALL}


def test_tags_filters_and_node_render_are_django_entry_points(scan_project: Scanner) -> None:
    sites = _direct(scan_project)
    for job in ("fan_count", "box", "FanNode.render"):
        assert sites.get(f"app.templatetags.fans.{job}") is Framework.DJANGO, (job, sites)
    assert "app.templatetags.fans.shout" not in sites  # it only formats text: no slow work


def test_a_project_registry_and_a_foreign_node_are_not(scan_project: Scanner) -> None:
    sites = _direct(scan_project)
    assert "app.decoys.fetch" not in sites, sites  # ``register`` is the project's Registry
    assert "app.decoys.Node.render" not in sites, sites  # an ast.NodeVisitor named Node
