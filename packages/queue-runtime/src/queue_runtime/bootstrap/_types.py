"""The bootstrap's shared vocabulary: which framework, and its one error."""

from __future__ import annotations

from enum import StrEnum

from queue_runtime.errors import ConfigError


class BootstrapError(ConfigError):
    """The worker cannot set up the app's framework."""


class Framework(StrEnum):
    NONE = "none"  # a plain Python app: jobs need nothing around them
    DJANGO = "django"
    FLASK = "flask"
