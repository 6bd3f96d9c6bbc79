"""A Socket.IO emit is an effect a repeat repeats, not slow work of its own.

``socketio.emit("updated", data, to=room)`` sends a message to every connected client: a
retried job sends it again (``socket_emit``, non-idempotent). It is fast, so a view that
emits is no in-process job for that alone: counted as slow work, every handler that
broadcasts a refresh became a site (46 more on one app of the labelled corpus).
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

EXT = "from flask_socketio import SocketIO\n\nsocketio = SocketIO()\n"
VIEWS = (
    "import threading\n\n"
    "from flask import Flask\n\n"
    "from app.ext import socketio\n\n"
    "app = Flask(__name__)\n\n\n"
    "def broadcast(room, data):\n"
    "    socketio.emit('update', data, to=room)\n\n\n"
    "@app.post('/rooms/<room>')\n"
    "def update_room(room):\n"
    "    socketio.emit('update', {'room': room}, to=room)\n"
    "    return 'ok'\n\n\n"
    "@app.post('/later/<room>')\n"
    "def later(room):\n"
    "    threading.Thread(target=broadcast, args=(room, {})).start()\n"
    "    return 'ok'\n"
)


def test_an_emit_repeats_but_is_no_slow_work(
    scan_project: Callable[[dict[str, str]], Inventory],
) -> None:
    inventory = scan_project({"app/__init__.py": "", "app/ext.py": EXT, "app/views.py": VIEWS})
    assert [s.enclosing_function for s in inventory.sites] == ["app.views.later"]
    (job,) = inventory.jobs
    assert job.qualname == "app.views.broadcast"
    assert job.idempotency == Idempotency.NON_IDEMPOTENT
    assert [e.kind for e in job.effects] == [EffectKind.SOCKET_EMIT]
