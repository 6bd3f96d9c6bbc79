"""The example type and the short names the example tables use."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.models import Pattern
from inventory.summary import TargetKind

F, P, L, B = TargetKind.FUNCTION, TargetKind.PARTIAL, TargetKind.LAMBDA, TargetKind.BOUND_METHOD
C, S, D = TargetKind.CALL_RESULT, TargetKind.THREAD_SUBCLASS, TargetKind.DYNAMIC


@dataclass(frozen=True)
class DetectorExample:
    """A small module and the sites the extractor reports in it.

    ``expected`` lists ``(job, kind)`` in source order; ``job`` is None for dynamic
    targets. For a Thread subclass the job is the class's ``run``, while the raw
    site's target is the class itself (the classifier checks its bases).
    """

    pattern: Pattern
    title: str
    source: str
    expected: list[tuple[str | None, TargetKind]]
    why: str

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
) -> DetectorExample:
    return DetectorExample(pattern, title, source.strip("\n") + "\n", expected, why)
