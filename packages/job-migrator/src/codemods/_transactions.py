"""Why a Django mail call inside a database transaction keeps failing in the request.

A failed send inside a transaction raises through it and rolls back what the
transaction wrote (the new user, the token the mail links to). Delivered by a
worker, the send cannot fail there: the rows are committed, the mail is not
sent. A call gets inside a transaction two ways, both read by ``migrator scan``
(``inventory._extract.detectors._guards``) and carried in the Inventory:

* ``transaction.atomic`` around it, by ``with`` or by decorator
  (``CallSite.surroundings.atomic_at``);
* ``ATOMIC_REQUESTS`` on a ``DATABASES`` entry of the project's settings
  (``Inventory.atomic_requests``): Django then runs every view in ``atomic``, so
  any call a request reaches is inside one, unless its view opts out with
  ``@transaction.non_atomic_requests`` (``CallSite.surroundings.non_atomic_requests``).
"""

from __future__ import annotations

from inventory.models import CallSite

SETTING = "ATOMIC_REQUESTS"


def atomic_reason(lines: list[int]) -> str:
    where = ", ".join(str(n) for n in lines)
    return (
        f"the call runs inside transaction.atomic (line(s) {where}): a failed send raises "
        "through it and rolls back what it wrote; delivered by a worker, the send cannot "
        "fail there, so the rows would stay without their mail; keep it inline, or send "
        "after the transaction (transaction.on_commit) and rewrite it by hand"
    )


def outside_requests(site: CallSite, callers: list[CallSite]) -> bool:
    """The call's function is a view that opts out (``@transaction.non_atomic_requests``),
    or, for a call inside the job, every one of the job's callers is in such a view."""
    if site.surroundings.non_atomic_requests:
        return True
    return bool(callers) and all(c.surroundings.non_atomic_requests for c in callers)


def requests_reason(where: list[str]) -> str:
    shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
    return (
        f"{SETTING} is on ({shown}): Django runs every view in transaction.atomic, so a "
        "failed send raises through it and rolls back what the request wrote; delivered by "
        "a worker, the send cannot fail there, so the rows would stay without their mail; "
        "keep it inline, or mark the view @transaction.non_atomic_requests (or send after "
        "the transaction, transaction.on_commit) and apply again"
    )
