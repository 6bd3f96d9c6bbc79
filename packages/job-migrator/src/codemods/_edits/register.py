"""Register a job where it is defined: ``@job(pool=..., idempotent=True)`` plus the import, once.

With ``[tool.migrator] target = "django-tasks"`` the decorator is Django's
``@task(...)`` (``from django.tasks import task``) with the runtime's options as
its keywords, which Django 6.1 forwards to queue_runtime's backend.

The decorator goes outermost, below ``@staticmethod`` only, so that ``fn.enqueue``
exists on the object every caller sees: above ``@classmethod`` it registers the
classmethod, which the runtime binds to the class it is read from (``cls.fn.enqueue``). The function
itself stays callable in-process: rolling back is switching the runtime to
inline mode, not reverting code. ``idempotent=True`` is written only for jobs
the inventory classifies ``idempotent``: it tells the runtime the verdict the
move relied on.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods._edits.imports import add_import
from codemods._jobdefs import registers
from codemods._syntax import dotted
from inventory.config import MigrationTarget

# The decorator each API registers with: (its package, its name).
DECORATOR = {
    MigrationTarget.QUEUE_RUNTIME: ("queue_runtime", "job"),
    MigrationTarget.DJANGO_TASKS: ("django.tasks", "task"),
}


def is_registered(node: cst.FunctionDef) -> bool:
    return registers(
        dotted(d.decorator.func) if isinstance(d.decorator, cst.Call) else dotted(d.decorator)
        for d in node.decorators
    )


class AddJobDecoratorTransformer(cst.CSTTransformer):
    """Adds ``@job(pool=...)`` to the functions at the given module-level qualpaths."""

    def __init__(self, arguments: dict[str, str], prefix: str) -> None:
        super().__init__()
        self.arguments = arguments  # qualpath -> the decorator's arguments, as source
        self.added: list[str] = []
        self._prefix = prefix  # "job", or "queue_runtime.job" when the module binds job
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
    while at < len(decorators) and dotted(decorators[at].decorator) == "staticmethod":
        at += 1
    if at == 0 and decorators:
        # The new first decorator takes over the comments that sat above the old one.
        new = new.with_changes(leading_lines=decorators[0].leading_lines)
        decorators = [decorators[0].with_changes(leading_lines=()), *decorators[1:]]
    return [*decorators[:at], new, *decorators[at:]]


def register(
    module: cst.Module,
    arguments: dict[str, str],
    first_party: frozenset[str] = frozenset(),
    api: MigrationTarget = MigrationTarget.QUEUE_RUNTIME,
) -> tuple[cst.Module, list[str]]:
    """Decorate the functions at the qualpaths of ``arguments`` and import the decorator once.

    ``first_party`` names the project's own top-level packages: the import goes
    in the third-party section before them, as isort / ruff would sort it.
    """
    package, name = DECORATOR[api]
    qualified = _name_taken(module, name, package)
    transformer = AddJobDecoratorTransformer(arguments, f"{package}.{name}" if qualified else name)
    updated = module.visit(transformer)
    if not transformer.added:
        return module, []
    if qualified:
        return add_import(updated, package, None, first_party), transformer.added
    return add_import(updated, package, name, first_party), transformer.added


def _name_taken(module: cst.Module, name: str, package: str) -> bool:
    """True when the module binds ``name`` to something other than ``package``'s."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef) and stmt.name.value == name:
            return True
        if isinstance(stmt, cst.SimpleStatementLine) and any(
            _binds(s, name, package) for s in stmt.body
        ):
            return True
    return False


def _binds(small: cst.BaseSmallStatement, name: str, package: str) -> bool:
    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        module = dotted(small.module) if small.module else None
        return any(_bound_name(a) == name for a in small.names) and module != package
    if isinstance(small, cst.Import):
        return any(_bound_name(a) == name for a in small.names)
    if isinstance(small, cst.Assign):
        return any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets)
    return False


def _bound_name(alias: cst.ImportAlias) -> str | None:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return dotted(alias.name)


def decorator_arguments(pool: str, idempotent: bool) -> str:
    """``pool="batch", idempotent=True``: what ``@job(...)`` is given."""
    return f'pool="{pool}"' + (", idempotent=True" if idempotent else "")


def task_arguments(pool: str, default_pool: str, idempotent: bool) -> str:
    """What Django's ``@task(...)`` is given: the pool unless it is the default queue's pool
    (Django's ``"default"`` queue is the runtime's ``default_pool``), the declared verdict."""
    found = [f'pool="{pool}"'] if pool != default_pool else []
    return ", ".join([*found, *(["idempotent=True"] if idempotent else [])])
