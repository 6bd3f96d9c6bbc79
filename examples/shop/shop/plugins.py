"""Plugin hooks: third-party code registers a function under an event name.

Which function runs is only known at run time, so the scanner cannot tell
what ``run_hook`` does: its verdict is ``unknown`` until someone reviews
the installed plugins.
"""

from __future__ import annotations

from collections.abc import Callable

Payload = dict[str, int | str | None]
Hook = Callable[[Payload], None]

HOOKS: dict[str, Hook] = {}


def register(event: str) -> Callable[[Hook], Hook]:
    def decorate(fn: Hook) -> Hook:
        HOOKS[event] = fn
        return fn

    return decorate


def run_hook(event: str, payload: Payload) -> None:
    """Job (unknown: the hook is looked up by name at run time)."""
    if event in HOOKS:
        HOOKS[event](payload)
