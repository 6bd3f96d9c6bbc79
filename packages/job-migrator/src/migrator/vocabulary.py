"""Words more than one room of ``migrator`` speaks: what ``migrator apply`` will do at a site.

The scan's reports show them per site, and the plan's preview maps apply's statuses
(``codemods.Status``) onto them (:mod:`migrator.plan.preview`), so both say it alike.
"""

from __future__ import annotations

# In the scan table's order.
MOVES, ALREADY_MOVED, LEFT_TO_YOU, STAYS = "moves", "already moved", "left to you", "stays"
APPLY_OUTCOMES = (MOVES, ALREADY_MOVED, LEFT_TO_YOU, STAYS)
