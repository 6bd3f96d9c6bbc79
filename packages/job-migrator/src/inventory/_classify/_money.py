"""Money words on project functions: ``gateway.capture(...)`` where the gateway is ours.

The catalogue's [[keyword]] rule (charge / capture / refund ... on a
payment-ish receiver) applies to library calls directly. For a *project*
function the body is usually better evidence, except when the body only shows
plumbing (an HTTP POST to the payment provider): then the name is what tells
us money moves. So the rule applies to a project callee only when nothing it
reaches is a catalogued payment; otherwise the wrapper would be reported twice,
once unkeyed by name and once keyed by its real API.
"""

from __future__ import annotations

from collections import deque

from inventory._catalogue import CallMatch, Catalogue
from inventory._classify._graph import CallGraph, CallTarget
from inventory.models import EffectKind


class MoneyWords:
    def __init__(self, graph: CallGraph, catalogue: Catalogue) -> None:
        self.graph = graph
        self.catalogue = catalogue
        self._pays: dict[str, bool] = {}

    def match(self, target: CallTarget) -> CallMatch | None:
        """A keyword payment for a call to a project function, if the rule applies."""
        if target.function is None:
            return None
        found = self.catalogue.match_keyword(target.call, target.name)
        if found is None or self._reaches_payment(target.function):
            return None
        return found

    def _reaches_payment(self, start: str) -> bool:
        seen = {start}
        todo = deque([start])
        while todo:
            current = todo.popleft()
            if self._pays_itself(current):
                return True
            for callee in self.graph.callees(current):
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return False

    def _pays_itself(self, qualname: str) -> bool:
        if qualname not in self._pays:
            self._pays[qualname] = any(self._is_payment(t) for t in self.graph.targets(qualname))
        return self._pays[qualname]

    def _is_payment(self, target: CallTarget) -> bool:
        if target.function is not None:
            return False
        found = self.catalogue.match_call(target.call, target.name)
        return found is not None and found.kind == EffectKind.PAYMENT
