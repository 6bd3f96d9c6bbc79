"""Module-level tables of values: ``{"pdf": PdfExporter(), "csv": CsvExporter}``.

A dict literal whose every value is a name of a function, class or module, or an
instance made by a constructor call, is a table: a value looked up in it is one of
those, whichever key is asked for (``Resolver.table_lookup``). What the module stores
is written into its ``assignments`` (``TABLE`` key, ``TABLE_VALUES`` value), so a
lookup in another module that imports the table is expanded by the index too. A table
the module adds to is a registry whose values are only known at run time: dropped.
"""

from __future__ import annotations

import ast

from inventory._extract._resolve import TABLE_VALUES, Resolver, capitalised
from inventory.summary import ReceiverKind

# As many values as ``self.m()`` dispatch follows overrides: a wider table is a gap.
MAX_VALUES = 16
_BUILTIN = "builtins."


def table_values(value: ast.expr, resolver: Resolver) -> str:
    """``TABLE_VALUES`` + the values (``pkg:f``, ``pkg:C``, ``pkg:C()``), or "" when
    ``value`` is no dict literal of such values."""
    if not isinstance(value, ast.Dict) or not value.values or len(value.values) > MAX_VALUES:
        return ""
    found = [_value(v, resolver) for v in value.values]
    if not all(found):
        return ""
    members = list(dict.fromkeys(found))
    return TABLE_VALUES + "|".join(m.replace(".", ":") for m in members)


def _value(node: ast.expr, resolver: Resolver) -> str:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        made = resolver.expr(node.func)
        known = made.receiver is not ReceiverKind.UNKNOWN and capitalised(made.target)
        return f"{made.target}()" if known and not made.target.startswith(_BUILTIN) else ""
    if isinstance(node, ast.Name | ast.Attribute):
        name = resolver.dotted(node) or ""
        return name if name and not name.startswith((_BUILTIN, "?")) else ""
    return ""
