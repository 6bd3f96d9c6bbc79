"""Site fingerprints: stable across line moves, used by baselines and SARIF.

A fingerprint hashes what a reviewer would call "the same site": the file,
the pattern, the job, the enclosing function, how the target is written, and
which occurrence of that tuple it is in the file. Line numbers are left out
on purpose so that adding code above a site does not make it "new".

Not the gate's fingerprint: that one (``queue_runtime.gate.fingerprint``,
computed from the imported code) hashes a job's code and everything of the
project it reaches, and a certification is valid for it alone. The analyzer
computes no gate fingerprint; ``FunctionSummary.source_hash`` is one
function's text only.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from inventory.models import CallSite


def fingerprint(path: str, pattern: str, job: str, enclosing: str, target: str, nth: int) -> str:
    text = "\x1f".join([path, pattern, job, enclosing, target, str(nth)])
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


def with_fingerprints(sites: list[CallSite]) -> list[CallSite]:
    """Fingerprint sites that are already sorted by (path, line, column)."""
    seen: Counter[tuple[str, str, str, str, str]] = Counter()
    out: list[CallSite] = []
    for site in sites:
        parts = (
            site.location.path,
            site.pattern.value,
            site.job,
            site.enclosing_function or "",
            site.target_source,
        )
        nth = seen[parts]
        seen[parts] += 1
        out.append(site.model_copy(update={"fingerprint": fingerprint(*parts, nth)}))
    return out
