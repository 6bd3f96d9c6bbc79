"""queue_runtime.django_mail: Django's message, built in the request, as a payload and back.

Django's set-up is process-wide, so each case runs ``djsite.send_mails`` (the tiny
project in ``tests/fixtures/framework_apps``) in a subprocess of its own. The worker
side, with a real worker and a SIGKILL, is in tests/integration/test_django_mail_worker.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.framework_env import djsite_env, send_mails

pytest.importorskip("django", reason="Django is not installed (the test-frameworks extra)")

LOCMEM = "django.core.mail.backends.locmem.EmailBackend"


def _case(name: str, tmp_path: Path, backend: str = LOCMEM) -> dict[str, Any]:
    return send_mails(djsite_env(tmp_path, backend), tmp_path, name)


def test_every_shape_comes_back_as_the_same_mime_message(tmp_path: Path) -> None:
    """Subject, body, addresses (bcc too), headers, alternatives, text and binary attachments,
    an html body: the rebuilt message reads as the original does, part by part."""
    found = _case("round_trip", tmp_path)
    for shape in ("plain", "rich", "html_only"):
        assert found[shape]["same"], shape
        assert found[shape]["caller_untouched"] and found[shape]["rebuilt_id"], shape
        # a lazy subject and a SafeString body are stored as plain text, forced in the request
        assert found[shape]["types"] == ["str"]
        assert found[shape]["message_id"].startswith("<")
    assert found["plain"]["recipients"] == [
        "to@djsite.example",
        "cc@djsite.example",
        "audit@djsite.example",
    ]
    ids = {found[s]["message_id"] for s in ("plain", "rich", "html_only")}
    assert len(ids) == 3  # one Message-ID per message


def test_what_the_payload_cannot_carry_is_named(tmp_path: Path) -> None:
    found = _case("round_trip", tmp_path)
    assert found["subclass"]["reason"].startswith("a Branded, not Django's own message class")
    assert found["mime_attachment"]["reason"].startswith("an attachment that is a MIME object")
    assert found["own_connection"]["reason"].startswith("a connection of the message's own")


def test_inline_mode_delivers_in_the_caller_and_keeps_the_rest_as_before(tmp_path: Path) -> None:
    found = _case("inline", tmp_path)
    # two queued deliveries (run at once in inline mode), a subclass sent as before, and
    # a message with no recipients that Django would not send either
    assert found["returned"] == ["InlineHandle", "InlineHandle", "int", "int"]
    subjects = [(m["subject"], m["class"]) for m in found["outbox"]]
    assert subjects == [
        ("S1", "EmailMultiAlternatives"),
        ("Report", "EmailMultiAlternatives"),
        ("s", "Branded"),
    ]
    assert found["outbox"][0]["alternatives"] == [["<p>h</p>", "text/html"]]
    assert all(m["message_id"] for m in found["outbox"][:2])


def test_inline_a_failed_send_raises_in_the_caller_as_before(tmp_path: Path) -> None:
    """While the gate keeps delivery inline, the caller's ``except`` (a message to the user)
    and an enclosing transaction's rollback see the failure, as with ``send_mail``; with
    ``fail_silently=True`` nothing is raised, as Django does."""
    found = _case("inline_failure", tmp_path, backend="djsite.backends.DownBackend")
    assert found["raised"] == ["SMTPServerDisconnected", None]
