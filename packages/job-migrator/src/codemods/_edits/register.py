"""Register a job where it is defined: ``@job(pool=..., idempotent=True)`` plus the import, once.

The decorator goes outermost, below ``@staticmethod``/``@classmethod`` only,
so that ``fn.enqueue`` exists on the object every caller sees. The function
itself stays callable in-process: rolling back is switching the runtime to
inline mode, not reverting code. ``idempotent=True`` is written only for jobs
the inventory classifies ``idempotent``: it tells the runtime the verdict the
move relied on.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods._edits.imports import add_import
from codemods._syntax import dotted

_REGISTERED = frozenset({"job", "queue_runtime.job"})
_DESCRIPTORS = frozenset({"staticmethod", "classmethod"})


def is_registered(node: cst.FunctionDef) -> bool:
    for decorator in node.decorators:
        expr = decorator.decorator
        name = dotted(expr.func) if isinstance(expr, cst.Call) else dotted(expr)
        if name in _REGISTERED:
            return True
    return False


class AddJobDecoratorTransformer(cst.CSTTransformer):
    """Adds ``@job(pool=...)`` to the functions at the given module-level qualpaths."""

    def __init__(self, arguments: dict[str, str], qualified: bool) -> None:
        super().__init__()
        self.arguments = arguments  # qualpath -> the decorator's arguments, as source
        self.added: list[str] = []
        self._prefix = "queue_runtime.job" if qualified else "job"
        self._scopes: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(node.name.value)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        self._scopes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # nested functions are never jobs a worker can import

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        qualpath = ".".join([*self._scopes, updated_node.name.value])
        arguments = self.arguments.get(qualpath)
        if arguments is None or is_registered(updated_node):
            return updated_node
        self.added.append(qualpath)
        return updated_node.with_changes(
            decorators=_with_job(updated_node.decorators, self._prefix, arguments)
        )


def _with_job(
    decorators: Sequence[cst.Decorator], prefix: str, arguments: str
) -> list[cst.Decorator]:
    new = cst.Decorator(decorator=cst.parse_expression(f"{prefix}({arguments})"))
    at = 0
    while at < len(decorators) and dotted(decorators[at].decorator) in _DESCRIPTORS:
        at += 1
    if at == 0 and decorators:
        # The new first decorator takes over the comments that sat above the old one.
        new = new.with_changes(leading_lines=decorators[0].leading_lines)
        decorators = [decorators[0].with_changes(leading_lines=()), *decorators[1:]]
    return [*decorators[:at], new, *decorators[at:]]


def register(
    module: cst.Module, arguments: dict[str, str], first_party: frozenset[str] = frozenset()
) -> tuple[cst.Module, list[str]]:
    """Decorate the functions at the qualpaths of ``arguments`` and import ``job`` once.

    ``first_party`` names the project's own top-level packages: the import goes
    in the third-party section before them, as isort / ruff would sort it.
    """
    qualified = _job_name_taken(module)
    transformer = AddJobDecoratorTransformer(arguments, qualified)
    updated = module.visit(transformer)
    if not transformer.added:
        return module, []
    updated = add_import(updated, "queue_runtime", None if qualified else "job", first_party)
    return updated, transformer.added


def _job_name_taken(module: cst.Module) -> bool:
    """True when the module binds ``job`` to something other than queue_runtime's."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef) and stmt.name.value == "job":
            return True
        if isinstance(stmt, cst.SimpleStatementLine) and any(_binds_job(s) for s in stmt.body):
            return True
    return False


def _binds_job(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        module = dotted(small.module) if small.module else None
        return any(_bound_name(a) == "job" for a in small.names) and module != "queue_runtime"
    if isinstance(small, cst.Import):
        return any(_bound_name(a) == "job" for a in small.names)
    if isinstance(small, cst.Assign):
        return any(
            isinstance(t.target, cst.Name) and t.target.value == "job" for t in small.targets
        )
    return False


def _bound_name(alias: cst.ImportAlias) -> str | None:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return dotted(alias.name)


def decorator_arguments(pool: str, idempotent: bool) -> str:
    """``pool="batch", idempotent=True``: what ``@job(...)`` is given."""
    return f'pool="{pool}"' + (", idempotent=True" if idempotent else "")
