"""Where each job is defined, and therefore whether a worker can import and call it."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods._syntax import dotted
from codemods._types import DefKind
from inventory.models import Job

# The decorators that register a job (queue_runtime's ``@job``, Django's ``@task``), by the name
# a definition spells them with: a function carrying one has its ``.enqueue`` already, so apply
# does not decorate it again, and an override carrying one is a job of its own.
REGISTERING = frozenset({"job", "queue_runtime.job", "task", "django.tasks.task"})


def registers(decorators: Iterable[str | None]) -> bool:
    """One of ``decorators`` (dotted names, a call's callee for ``@job(...)``) registers a job."""
    return any(name in REGISTERING for name in decorators)


def registered_def(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``@job`` / ``@job(...)`` / ``@task(...)`` on an ``ast`` definition."""
    return registers(
        ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list
    )


@dataclass(frozen=True)
class FunctionDefInfo:
    qualpath: str  # inside the module: "send", "Mailer.send", "outer.<locals>.inner"
    kind: DefKind
    first_line: int  # the first decorator, or the def line
    def_line: int
    end_line: int

    @property
    def name(self) -> str:
        return self.qualpath.rsplit(".", 1)[-1]


class GatherFunctionDefsVisitor(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.defs: list[FunctionDefInfo] = []
        self._scopes: list[tuple[str, bool]] = []  # (name, is_class)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append((node.name.value, True))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        pos = self.get_metadata(PositionProvider, node)
        lines = [self.get_metadata(PositionProvider, d).start.line for d in node.decorators]
        qualpath = ".".join(n if cls else f"{n}.<locals>" for n, cls in self._scopes)
        qualpath = f"{qualpath}.{node.name.value}" if qualpath else node.name.value
        kind = _kind(node, self._scopes)
        self.defs.append(
            FunctionDefInfo(
                qualpath, kind, min([pos.start.line, *lines]), pos.start.line, pos.end.line
            )
        )
        self._scopes.append((node.name.value, False))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()


def _kind(node: cst.FunctionDef, scopes: list[tuple[str, bool]]) -> DefKind:
    if not scopes:
        return DefKind.FUNCTION
    if not scopes[-1][1]:
        return DefKind.NESTED
    names = {dotted(d.decorator) for d in node.decorators}
    if "staticmethod" in names:
        return DefKind.STATICMETHOD
    return DefKind.CLASSMETHOD if "classmethod" in names else DefKind.METHOD


def gather(module: cst.Module) -> list[FunctionDefInfo]:
    visitor = GatherFunctionDefsVisitor()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
    return visitor.defs


def find(defs: list[FunctionDefInfo], job: Job) -> FunctionDefInfo | None:
    """The definition of ``job``: same name, at the recorded line, else the best qualname match."""
    name = job.qualname.rsplit(".", 1)[-1]
    same_name = [d for d in defs if d.name == name]
    line = job.location.line if job.location else None
    at_line = [d for d in same_name if line is not None and d.first_line <= line <= d.def_line]
    if at_line:
        return at_line[0]
    by_path = [
        d
        for d in same_name
        if job.qualname.endswith("." + d.qualpath) or job.qualname == d.qualpath
    ]
    return by_path[0] if len(by_path) == 1 else None
