"""What the extractor knows about library functions: which return an instance of what."""

from __future__ import annotations

EVENT_LOOP = "asyncio.AbstractEventLoop"

# Library functions returning an instance of a known class, so that methods called on the
# result resolve to what the effect catalogue matches (``PIL.Image.Image.save``).
FACTORIES = {
    "asyncio.get_event_loop": EVENT_LOOP,
    "asyncio.get_running_loop": EVENT_LOOP,
    "asyncio.new_event_loop": EVENT_LOOP,
    "asyncio.events.get_event_loop": EVENT_LOOP,
    "PIL.Image.open": "PIL.Image.Image",
    "PIL.Image.new": "PIL.Image.Image",
    "sqlite3.connect": "sqlite3.Connection",
    "requests.session": "requests.Session",
}
