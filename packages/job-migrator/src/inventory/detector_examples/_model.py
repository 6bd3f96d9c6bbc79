"""The example type and the short names the example tables use."""

from __future__ import annotations

from dataclasses import dataclass, field

from inventory.models import Pattern
from inventory.summary import TargetKind

F, P, L, B = TargetKind.FUNCTION, TargetKind.PARTIAL, TargetKind.LAMBDA, TargetKind.BOUND_METHOD
C, S, D = TargetKind.CALL_RESULT, TargetKind.THREAD_SUBCLASS, TargetKind.DYNAMIC


@dataclass(frozen=True)
class DetectorExample:
    """A small module and the sites the extractor reports in it.

    ``expected`` lists ``(job, kind)`` in source order; ``job`` is None for dynamic
    targets. For a Thread subclass the job is the class's ``run``, while the raw
    site's target is the class itself (the classifier checks its bases). ``modules``:
    other files of the example's project (``urls.py`` registering the views of ``app``).
    """

    pattern: Pattern
    title: str
    source: str
    expected: list[tuple[str | None, TargetKind]]
    why: str
    modules: dict[str, str] = field(default_factory=dict)  # more files: path -> source

    @property
    def valid(self) -> bool:
        """True when the example must be reported."""
        return bool(self.expected)


def example(
    pattern: Pattern,
    title: str,
    expected: list[tuple[str | None, TargetKind]],
    why: str,
    source: str,
    modules: dict[str, str] | None = None,
) -> DetectorExample:
    more = {path: text.strip("\n") + "\n" for path, text in (modules or {}).items()}
    return DetectorExample(pattern, title, source.strip("\n") + "\n", expected, why, more)
