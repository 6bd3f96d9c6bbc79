"""Hand-built FileSummary pieces for classifier tests that do not need the extractor."""

from __future__ import annotations

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory.config import MigratorConfig
from inventory.models import CallSite, Job, Pattern
from inventory.summary import CallInfo, FileSummary, FunctionInfo, RawSite, Span, TargetKind

CATALOGUE = Catalogue.load()


def call(target: str, line: int = 1, **fields: object) -> CallInfo:
    return CallInfo.model_validate({"target": target, "span": Span(line=line), **fields})


def fn(qualname: str, *calls: CallInfo, line: int = 1, **fields: object) -> FunctionInfo:
    name = qualname.rsplit(".", 1)[-1]
    return FunctionInfo.model_validate(
        {
            "qualname": qualname,
            "name": name,
            "span": Span(line=line),
            "calls": list(calls),
            **fields,
        }
    )


def module(name: str, *functions: FunctionInfo, **fields: object) -> FileSummary:
    path = name.replace(".", "/") + ("/__init__.py" if fields.get("is_package") else ".py")
    return FileSummary.model_validate(
        {"path": path, "module": name, "functions": list(functions), **fields}
    )


def thread_site(target: str | None, enclosing: str, line: int = 1, **fields: object) -> RawSite:
    kind = TargetKind.FUNCTION if target else TargetKind.DYNAMIC
    data = {"target_kind": kind, "target_source": target or "handlers[name]", **fields}
    return RawSite.model_validate(
        {
            "pattern": Pattern.THREAD,
            "span": Span(line=line),
            "target": target,
            "enclosing_function": enclosing,
            **data,
        }
    )


def run(
    *summaries: FileSummary, config: MigratorConfig | None = None
) -> tuple[list[CallSite], list[Job]]:
    return classify(list(summaries), config or MigratorConfig(), CATALOGUE)


def job_of(jobs: list[Job], qualname: str) -> Job:
    return next(j for j in jobs if j.qualname == qualname)
