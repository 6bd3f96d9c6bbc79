"""Import statements as (local name, dotted target) pairs, relative ones absolutised."""

from __future__ import annotations

import ast


def package_of(module: str, is_package: bool) -> list[str]:
    """The package a level-1 relative import starts from, as parts."""
    parts = module.split(".") if module else []
    return parts if is_package else parts[:-1]


def absolute_base(module: str, is_package: bool, level: int, name: str | None) -> str:
    """``from ..x import y`` in ``a.b.c`` -> ``a.x``; beyond the root, what is left."""
    parts = package_of(module, is_package)
    if level > 1:
        parts = parts[: max(len(parts) - (level - 1), 0)]
    if name:
        parts = [*parts, *name.split(".")]
    return ".".join(parts)


def bindings_of(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool
) -> list[tuple[str, str]]:
    """Local names an import binds and what they refer to; ``*`` gives ``("*", module)``."""
    if isinstance(node, ast.Import):
        return [_plain(alias) for alias in node.names]
    base = node.module or ""
    if node.level:
        base = absolute_base(module, is_package, node.level, node.module)
    pairs = []
    for alias in node.names:
        if alias.name == "*":
            pairs.append(("*", base))
            continue
        target = f"{base}.{alias.name}" if base else alias.name
        pairs.append((alias.asname or alias.name, target))
    return pairs


def _plain(alias: ast.alias) -> tuple[str, str]:
    # ``import a.b.c`` binds ``a`` (to the package a); ``import a.b as c`` binds c to a.b.
    if alias.asname:
        return alias.asname, alias.name
    root = alias.name.split(".", 1)[0]
    return root, root
