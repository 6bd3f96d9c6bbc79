"""Issue 12: the suggested key never merges different work; keys are checked statically.

What counts as *shown* to leave the effect alone (``inventory._classify._suggest``):
``self`` / ``cls`` only. Parameter names and untraced uses show nothing, so a
job of several parameters gets ``{*}`` (every argument), one of one parameter
``{param}``, and one without parameters no key at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.keys import key_problem, suggest_key


@pytest.mark.parametrize(
    ("params", "key"),
    [
        (["subject", "message", "from_email", "recipient_list"], "app.mail:{*}"),
        (["product_id", "qty"], "app.mail:{*}"),
        (["request", "user_id"], "app.mail:{*}"),  # "request" is not shown irrelevant
        (["user_id"], "app.mail:{user_id}"),
        (["self", "order_id"], "app.mail:{order_id}"),  # self is not an argument of the job
        (["self"], None),  # a Thread subclass's run(): no input, no fieldless key
        ([], None),
    ],
)
def test_suggestions(params: list[str], key: str | None) -> None:
    assert suggest_key("app.mail", params) == key


def test_a_suggestion_always_fits_its_job() -> None:
    for params in (["a"], ["a", "b"], ["self", "a", "b", "c"]):
        key = suggest_key("app.j", params)
        assert key is not None and key_problem("app.j", key, params) is None


def test_templates_are_checked_against_the_parameters() -> None:
    assert key_problem("app.j", "j:{user.id}:{*}", ["user"]) is None
    assert "has no field" in (key_problem("app.j", "j", ["user"]) or "")
    assert "{uid} is not a parameter of app.j" in (key_problem("app.j", "j:{uid}", ["user"]) or "")


def test_key_functions_are_read_from_the_project_never_imported(tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "app"
    pkg.mkdir(parents=True)
    (pkg / "keys.py").write_text(
        "raise SystemExit('imported!')\n"
        "def mail(subject, to, *, body=''):\n    return subject\n"
        "def short(subject):\n    return subject\n"
        "alias = mail\n"
    )
    params = ["subject", "to"]
    assert key_problem("app.j", "app.keys:mail", params, tmp_path) is None
    assert key_problem("app.j", "app.keys:alias", params, tmp_path) is None  # shape unknown
    assert "takes no parameter to" in (
        key_problem("app.j", "app.keys:short", params, tmp_path) or ""
    )
    assert "defines no function nope" in (
        key_problem("app.j", "app.keys:nope", params, tmp_path) or ""
    )
    assert "no module app.other" in (key_problem("app.j", "app.other:f", params, tmp_path) or "")
    assert key_problem("app.j", "app.other:f", params, None) is None  # no project: runtime checks
