"""In-memory collectors that outlive the job: what is appended to them ships later.

``_BUFFER.append(event)`` on a module-level list, or ``self._traces.append(t)`` in a
method of a class with a module-level instance (``collector = TraceCollector()``): the
collection lives as long as the process, and a flush, a background thread or an
endpoint reads it later. A repeat of the job adds another item, so this is a
repeating effect (``cache_incr``: a process-local buffer that grows), not nothing.

A local list, or one held by an object the job builds itself, dies with the job:
only module-level holders count. ``add`` is left out: on a set it converges.
"""

from __future__ import annotations

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory.summary import CallInfo, FunctionInfo, ReceiverKind

_GROWS = frozenset({"append", "appendleft", "extend", "extendleft", "insert", "put", "put_nowait"})
_SELF = "self."


class Collectors:
    """Which calls grow a collection held at module level."""

    def __init__(self, index: SymbolIndex) -> None:
        self.index = index
        self._singletons: frozenset[str] | None = None

    def holder(self, call: CallInfo, fn: FunctionInfo, local: bool) -> str | None:
        """The module-level holder ``call`` appends to (for the evidence), else None.
        ``local``: the receiver is a local the extractor qualified as a module global."""
        method = call.target.rsplit(".", 1)[-1]
        source = call.receiver_source
        if method not in _GROWS or not source:
            return None
        if call.receiver == ReceiverKind.MODULE and "." not in source and not local:
            head = call.target.rsplit(".", 1)[0]
            return source if self.index.resolve(head).kind == SymbolKind.MISSING else None
        attr = source.removeprefix(_SELF)
        if source.startswith(_SELF) and attr.isidentifier() and self._on_singleton(fn):
            return source
        return None

    def _on_singleton(self, fn: FunctionInfo) -> bool:
        if fn.class_name is None:
            return False
        owner = fn.qualname.rsplit(".", 1)[0]
        singletons = self._module_instances()
        return any(cls in singletons for cls in self.index.mro(owner))

    def _module_instances(self) -> frozenset[str]:
        """Project classes some module instantiates at import (``collector = Collector()``)."""
        if self._singletons is None:
            found: set[str] = set()
            # a copy: resolving a value may read a library module into the index
            for summary in list(self.index.modules.values()):
                for name, value in summary.assignments.items():
                    if name.endswith("()") or (name[:1].isupper() and not name.isupper()):
                        continue  # a function's return type, or ``Alias = SomeClass``
                    resolved = self.index.resolve(value)
                    if resolved.kind == SymbolKind.CLASS:
                        found.add(resolved.name)
            self._singletons = frozenset(found)
        return self._singletons
