"""Call-site fingerprints that survive edits elsewhere in the file.

A fingerprint names a site by what it is (file, pattern, job, enclosing
function, how the target is written) plus its rank among identical sites of
the same file, never by its line: inserting lines above a site keeps it, so
a baseline keeps suppressing the same finding after unrelated edits.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from inventory.models import CallSite


def _identity(site: CallSite) -> str:
    parts = (site.location.path, site.pattern, site.job, site.enclosing_function or "", site.target_source)
    return "\x1f".join(parts)


def fill_fingerprints(sites: list[CallSite]) -> None:
    """Give every site without a fingerprint a stable one (in place)."""
    seen: Counter[str] = Counter()
    ordered = sorted(sites, key=lambda s: (s.location.path, s.location.line, s.location.column))
    for site in ordered:
        identity = _identity(site)
        rank = seen[identity]
        seen[identity] += 1
        if not site.fingerprint:
            text = f"{identity}\x1f{rank}".encode()
            site.fingerprint = hashlib.sha256(text).hexdigest()[:32]
