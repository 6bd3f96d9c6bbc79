"""queue_runtime.keys: the digest key, templates and key functions checked against the job."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from queue_runtime.jobs import JobFunction, job
from queue_runtime.keys import KeyMismatch, check_key, digest_key, render_key
from queue_runtime.registry import Registry


def mail(subject: str, sender: str, recipients: list[str], body: str = "") -> None:
    """The Django mail-helper shape of issue 12."""


MAIL: JobFunction[..., None] = job(name="app.mail", registry=Registry())(mail)
OTHER: JobFunction[..., None] = job(name="app.other", registry=Registry())(mail)


def welcome_key(subject: str, sender: str, recipients: list[str], body: str = "") -> str:
    return f"{subject}:{','.join(recipients)}"


def test_the_digest_covers_every_argument_and_the_job_name() -> None:
    base = digest_key(MAIL, "Hi", "a@x", ["u@x"])
    assert digest_key(MAIL, "Hi", "a@x", ["v@x"]) != base  # only the recipient differs
    assert digest_key(MAIL, "Hi", "b@x", ["u@x"]) != base
    assert digest_key(OTHER, "Hi", "a@x", ["u@x"]) != base
    assert digest_key(MAIL, subject="Hi", recipients=["u@x"], sender="a@x") == base
    assert len(base) == 32 and int(base, 16) >= 0


def test_the_digest_is_the_same_in_every_process(tmp_path: Path) -> None:
    script = (
        "from queue_runtime.jobs import job\n"
        "from queue_runtime.keys import digest_key\n"
        "from queue_runtime.registry import Registry\n"
        "def f(a, b): pass\n"
        "print(digest_key(job(name='x.f', registry=Registry())(f), {'k': 1, 'j': [2]}, 'b'))\n"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(4)
    }
    assert len(seen) == 1


def test_templates_render_fields_attribute_paths_and_the_digest() -> None:
    call = (("Hi", "a@x", ["u@x"]), {})
    assert render_key(MAIL, "mail:{subject}:{sender}", *call) == "mail:Hi:a@x"
    assert render_key(MAIL, "mail:{*}", *call) == "mail:" + digest_key(MAIL, "Hi", "a@x", ["u@x"])
    assert render_key(MAIL, "mail:{body}", *call) == "mail:"  # a default applies
    key = f"{__name__}:welcome_key"
    assert render_key(MAIL, key, *call) == "Hi:u@x"


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("mail", "has no field"),
        ("mail:{recipient}", "{recipient} is not a parameter of app.mail"),
        ("mail:{subject!r}", "no format spec or conversion"),
        ("mail:{subject", "not a valid template"),
        ("no_such_module_here:key", "cannot import no_such_module_here"),
        (f"{__name__}:nothing", "defines no function nothing"),
        ("json:dumps", "parameter 1 is obj, the job's is subject"),
    ],
)
def test_a_key_that_does_not_fit_is_refused_in_one_line(key: str, message: str) -> None:
    with pytest.raises(KeyMismatch) as info:
        check_key(MAIL, key)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_key_function_must_take_every_parameter_of_the_job() -> None:
    check_key(MAIL, f"{__name__}:welcome_key")
    with pytest.raises(KeyMismatch, match="it takes no parameter body"):
        check_key(MAIL, f"{__name__}:_no_body")
    with pytest.raises(KeyMismatch, match="it requires salt"):
        check_key(MAIL, f"{__name__}:_salted")
    check_key(MAIL, f"{__name__}:_anything")


def _no_body(subject: str, sender: str, recipients: list[str]) -> str:
    return subject


def _salted(subject: str, sender: str, recipients: list[str], body: str, salt: str) -> str:
    return salt


def _anything(*args: object, **kwargs: object) -> str:
    return repr((args, kwargs))


def test_a_per_call_key_is_fresh_for_every_call_even_with_equal_arguments() -> None:
    """``{+}``: two requests with equal arguments are two units of work (issue 22)."""
    check_key(MAIL, "app.mail:{+}")
    first = render_key(MAIL, "app.mail:{+}", ("Hi", "a@x", ["u@x"]), {})
    second = render_key(MAIL, "app.mail:{+}", ("Hi", "a@x", ["u@x"]), {})
    assert first.startswith("app.mail:") and second.startswith("app.mail:")
    assert first != second and len(first.removeprefix("app.mail:")) == 32
