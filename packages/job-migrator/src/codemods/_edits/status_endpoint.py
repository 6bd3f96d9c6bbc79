"""The status endpoint 202 answers point at: ``GET /jobs/{job_id}``, added to the FastAPI app once.

The router lives in a new module next to the module that creates the app
(``app = FastAPI(...)``), and is included right after that assignment. A
second run finds the module and the include and adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import libcst.matchers as m

from codemods._edits.imports import add_import

MODULE_NAME = "job_status"
SKIP_DIRS = frozenset(
    {".venv", "venv", ".git", ".migrator", "tests", "node_modules", "__pycache__"}
)

ROUTER_SOURCE = '''"""GET /jobs/{job_id}: the status of a queued job (added by `migrator apply`).

Handlers that hand their work to the queue answer 202 with this URL.
"""

import queue_runtime
from fastapi import APIRouter, HTTPException

router = APIRouter()


@router.get("/jobs/{job_id}")
def job_status(job_id: int) -> dict[str, object]:
    try:
        record = queue_runtime.get_job(job_id).record()
    except queue_runtime.QueueError as exc:
        raise HTTPException(404, f"job {job_id}: {exc}") from exc
    return {
        "job_id": record.id,
        "name": record.name,
        "status": str(record.status),
        "result": record.result,
        "error": record.error,
    }
'''


@dataclass(frozen=True)
class AppModule:
    path: str  # POSIX, relative to the root
    source: str
    app_name: str  # the variable the FastAPI() instance is bound to
    router_path: str  # where the status router module goes
    import_from: str | None  # "shop" for ``from shop import job_status``; None: top level
    router_exists: bool = False  # a second run: the module was created by the first


def find_app(root: Path) -> AppModule | None:
    """The first module (in path order) that binds ``name = FastAPI(...)``."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if SKIP_DIRS.intersection(rel.parts[:-1]):
            continue
        source = path.read_bytes().decode("utf-8", errors="replace")
        name = _app_name(source) if "FastAPI(" in source else None
        if name is not None:
            return _module(root, rel, source, name)
    return None


def _app_name(source: str) -> str | None:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None
    pattern = m.Assign(
        targets=[m.AssignTarget(target=m.Name())], value=m.Call(func=m.Name("FastAPI"))
    )
    found = m.findall(module, pattern)
    if not found:
        return None
    assign = cst.ensure_type(found[0], cst.Assign)
    return cst.ensure_type(assign.targets[0].target, cst.Name).value


def _module(root: Path, rel: Path, source: str, name: str) -> AppModule:
    package = rel.parent
    router = (package / f"{MODULE_NAME}.py").as_posix()
    is_package = (root / package / "__init__.py").is_file() and package != Path(".")
    return AppModule(
        rel.as_posix(), source, name, router, ".".join(package.parts) if is_package else None
    )


class IncludeStatusRouterTransformer(cst.CSTTransformer):
    """``app.include_router(job_status.router)`` right after ``app = FastAPI(...)``."""

    def __init__(self, app_name: str) -> None:
        super().__init__()
        self.app_name = app_name
        self.done = False

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._insert(updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._insert(updated_node.body))

    def _insert(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out = list(body)
        for i, stmt in enumerate(body):
            if not self.done and m.matches(stmt, _creates(self.app_name)):
                include = cst.parse_statement(
                    f"{self.app_name}.include_router({MODULE_NAME}.router)\n"
                )
                out.insert(i + 1, include)
                self.done = True
        return out


def _creates(app_name: str) -> m.SimpleStatementLine:
    assign = m.Assign(
        targets=[m.AssignTarget(target=m.Name(app_name))], value=m.Call(func=m.Name("FastAPI"))
    )
    return m.SimpleStatementLine(body=[assign])


def add_to_app(app: AppModule, module: cst.Module) -> cst.Module:
    """Include the status router in ``module`` (the app module) unless it already is."""
    if f"{MODULE_NAME}.router" in module.code:
        return module
    transformer = IncludeStatusRouterTransformer(app.app_name)
    updated = module.visit(transformer)
    # The router module is the project's own: the import goes in its first-party section.
    own = frozenset({(app.import_from or MODULE_NAME).split(".", 1)[0]})
    if app.import_from:
        return add_import(updated, app.import_from, MODULE_NAME, own)
    return add_import(updated, MODULE_NAME, None, own)
