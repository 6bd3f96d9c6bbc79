"""A call resolved as far as the index can: the type the call graph and the guesses share.

At the bottom of ``_classify`` so that the name guesses (``_guesses``) and the
analyses reading the graph (``_gaps``, ``_local``, ``_money``, ``_sites``) can
name it without importing the graph itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from inventory._classify._index import SymbolKind
from inventory.summary import CallInfo


@dataclass(frozen=True)
class CallTarget:
    call: CallInfo
    name: str  # canonical dotted name, what the catalogue is matched against
    kind: SymbolKind
    function: str | None  # the project function the call runs, if any
    # ``self.m()`` with more overrides below the class than are followed (``_dispatch``):
    # this target stands for the rest, a gap.
    more_overrides: int = 0
    # ``Skill.objects.create(...)`` runs ``Skill.save``: the function runs inside the call,
    # called by the framework, and the call is not the function's own (nor its arguments)
    run_inside: bool = False
