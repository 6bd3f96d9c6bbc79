"""What running one attempt of a job produced: a typed value, never an exception."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class OutcomeKind(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # the job raised: retried by its policy, or dead if permanent
    TIMED_OUT = "timed_out"  # ran past its timeout: retried by its policy
    REJECTED = "rejected"  # payload that no longer validates, unknown name past its deadline: DLQ
    CANCELLED = "cancelled"  # stopped on a cancel request (JobCancelled): neither retried nor DLQ


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: OutcomeKind
    result: Any = None  # JSON-ready, for SUCCEEDED
    error: str = ""
    traceback: str = ""
    permanent: bool = False  # FAILED with an exception the policy calls permanent

    @classmethod
    def rejected(cls, reason: str) -> Outcome:
        return cls(OutcomeKind.REJECTED, error=reason, permanent=True)

    @classmethod
    def cancelled(cls, reason: str) -> Outcome:
        return cls(OutcomeKind.CANCELLED, error=reason, permanent=True)

    @classmethod
    def timed_out(cls, seconds: float) -> Outcome:
        return cls(OutcomeKind.TIMED_OUT, error=f"timed out after {seconds:g}s")
