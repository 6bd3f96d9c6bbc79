"""Markdown pieces of ``docs/scan.md``: examples and model field tables."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from inventory.detector_examples import DetectorExample
from inventory.models import Idempotency, Pattern
from inventory.rule_examples import RuleExample

VERDICT_MEANING = {
    Idempotency.IDEMPOTENT: "running it twice has the effect of running it once: safe to retry",
    Idempotency.NEEDS_KEY: "safe only with an idempotency key or deduplication (the key is suggested)",
    Idempotency.NON_IDEMPOTENT: "a retry repeats an effect (a second row, email, POST, ...)",
    Idempotency.UNSAFE: "moves money or account state: never moved until verified and load-tested",
    Idempotency.UNKNOWN: "effects hidden behind dynamic calls or subprocesses: review by hand",
}
PATTERN_MEANING = {
    Pattern.DIRECT_CALL: "slow work (sends, payments, outside HTTP, images, reports) called inline in a request handler",
    Pattern.THREAD: "`threading.Thread(target=...).start()` and `Thread` subclasses",
    Pattern.EXECUTOR_SUBMIT: "`ThreadPoolExecutor` / `ProcessPoolExecutor` `.submit` and `.map`",
    Pattern.PROCESS: "`multiprocessing.Process`, `Pool.apply_async` / `map_async`",
    Pattern.ASYNCIO_TASK: "`asyncio.create_task`, `ensure_future`, `TaskGroup.create_task`",
    Pattern.RUN_IN_EXECUTOR: "`loop.run_in_executor`, `asyncio.to_thread`",
    Pattern.BACKGROUND_TASKS: "Starlette / FastAPI `BackgroundTasks.add_task`",
    Pattern.ON_COMMIT: "Django `transaction.on_commit`",
    Pattern.SIGNAL_RECEIVER: "Django `@receiver` and `signal.connect`",
    Pattern.SCHEDULER: "in-process schedulers: APScheduler `add_job` / `scheduled_job`, `schedule.every().do`",
    Pattern.ENQUEUE: "already moved: `fn.enqueue(...)`, `fn.enqueue_many(...)`, `fn.options(...).enqueue(...)` of a `queue_runtime` `@job` (`migrator apply` leaves these alone)",
}


def _code(source: str, language: str = "python") -> str:
    return f"```{language}\n{source.rstrip()}\n```"


def verdict_rows(verdicts: type[Idempotency]) -> str:
    ordered = sorted(verdicts, key=lambda v: v.severity, reverse=True)
    return "\n".join(f"| `{v.value}` | {VERDICT_MEANING[v]} | {v.severity} |" for v in ordered)


def render_detectors(examples: Mapping[Pattern, Sequence[DetectorExample]]) -> str:
    parts = []
    for pattern in Pattern:
        parts.append(f"### `{pattern.value}`\n\n{PATTERN_MEANING[pattern]}.")
        found = examples.get(pattern, [])
        if not found:
            parts.append(NO_DETECTOR_EXAMPLES)
        parts += [_detector(example) for example in found]
    return "\n\n".join(parts)


NO_DETECTOR_EXAMPLES = (
    "No per-file example: these sites are found by the classifier, from the effects of "
    "what a request handler calls (see the classification rules below)."
)


def _detector(example: DetectorExample) -> str:
    if example.valid:
        jobs = ", ".join(f"`{job or 'unknown'}` ({kind.value})" for job, kind in example.expected)
        verdict = f"Reported: {jobs}."
    else:
        verdict = "Not reported."
    if not example.modules:
        return f"#### {example.title}\n\n{_code(example.source)}\n\n{verdict} {example.why}"
    files = {"app.py": example.source, **example.modules}
    blocks = "\n\n".join(f"`{path}`:\n\n{_code(source)}" for path, source in files.items())
    return f"#### {example.title}\n\n{blocks}\n\n{verdict} {example.why}"


def render_rules(examples: Iterable[RuleExample]) -> str:
    return "\n\n".join(_rule(example) for example in examples)


def _rule(example: RuleExample) -> str:
    kinds = ", ".join(f"`{k.value}`" for k in sorted(example.expected_effect_kinds)) or "none"
    head = f"#### {example.title}\n\n`{example.job}` is **{example.expected_verdict.value}** (effects: {kinds}). {example.why}"
    job_module = example.job.rsplit(".", 1)[0].replace(".", "/") + ".py"
    files = sorted(example.sources().items(), key=lambda item: (item[0] != job_module, item[0]))
    blocks = [f"`{path}`:\n\n{_code(source)}" for path, source in files if source.strip()]
    if example.pyproject:
        blocks.insert(0, f"`pyproject.toml`:\n\n{_code(example.pyproject, 'toml')}")
    return "\n\n".join([head, *blocks])


def _type_name(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return re.sub(r"\b(?:[a-z_]\w*\.)+(\w+)", r"\1", text)


def _default(field: Any) -> str:
    if field.default_factory is not None:
        return (
            f"`{field.default_factory()!r}`" if field.default_factory in (list, dict) else "(built)"
        )
    if field.default is PydanticUndefined:
        return "required"
    value = field.default.value if isinstance(field.default, StrEnum) else field.default
    return f"`{value!r}`" if value is not None else "`None`"


# Descriptions for fields whose model leaves them implicit (docs only).
FIELD_NOTES = {
    ("MigratorConfig", "catalogue"): "Effect catalogue additions, same format as `catalogue.toml`.",
    (
        "MigratorConfig",
        "jobs",
    ): 'Per-job settings, keyed by qualified name (`[tool.migrator.jobs."name"]`).',
    ("JobSetting", "idempotency"): "A pinned verdict; needs a `reason`.",
    ("JobSetting", "reason"): "Why the verdict is pinned (shown as evidence).",
    ("Inventory", "schema_version"): "`MAJOR.MINOR` of this format.",
    ("Inventory", "tool_version"): "Version of job-migrator that wrote it.",
    ("Inventory", "sites"): "Every call site, ordered by path and line.",
    ("Inventory", "jobs"): "Every job with at least one site, by qualified name.",
    ("Inventory", "errors"): "Files that could not be summarised; the scan went on.",
    ("Inventory", "stats"): "Counts and timing of this scan.",
    ("CallSite", "location"): "Where the work is started.",
    ("CallSite", "unresolved_reason"): "Why `job` is `unknown`, when it is.",
    ("CallSite", "enclosing_function"): "Qualified name of the function containing the site.",
    (
        "CallSite",
        "result_used",
    ): "True when the caller uses the result (it cannot simply be enqueued).",
    ("CallSite", "result_use_lines"): "Lines where the result is used.",
    ("CallSite", "arguments"): "Arguments passed to the job.",
    ("CallSite", "idempotency"): "The verdict of the job it starts.",
    ("Argument", "reason"): "Why it is or is not serialisable.",
    ("Job", "qualname"): "Qualified name: `module.function` or `module.Class.method`.",
    ("Job", "location"): "Where the job function is defined.",
    ("Job", "effects"): "Effects found in the job and in what it calls.",
    (
        "Job",
        "evidence",
    ): "The reasoning, one checkable line each; the rule that decided comes last.",
    ("Job", "suggested_key"): "An idempotency key template built from the job's parameters.",
    ("Job", "is_async"): "True for `async def` jobs.",
    ("Job", "parameters"): "Parameter names of the job function.",
    ("Effect", "location"): "Where the effect happens (maybe deep in a callee).",
    ("Effect", "detail"): "Extra context, such as the SQL text or the refinement that applied.",
    ("Evidence", "message"): "What was found and why it matters.",
    ("Evidence", "chain"): "Qualified names from the job down to the evidence.",
    ("Location", "path"): "POSIX path relative to the scanned root.",
    ("Location", "line"): "1-based line.",
    ("Location", "column"): "0-based column (SARIF output adds 1).",
    ("ScanError", "path"): "POSIX path relative to the scanned root.",
    ("ScanError", "reason"): "What went wrong, with the line when there is one.",
    ("ScanStats", "files_scanned"): "Files summarised (from the cache or read this time).",
    ("ScanStats", "files_cached"): "Of those, summaries reused from the cache.",
    ("ScanStats", "files_skipped"): "Files listed in `errors`.",
    ("ScanStats", "lines"): "Lines in the summarised files.",
    ("ScanStats", "functions"): "Functions and methods in the summarised files.",
    ("ScanStats", "seconds"): "Wall-clock duration of the scan.",
}


def _enum_of(annotation: Any) -> type[StrEnum] | None:
    candidates = [annotation, *getattr(annotation, "__args__", ())]
    return next((c for c in candidates if isinstance(c, type) and issubclass(c, StrEnum)), None)


def _description(model: type[BaseModel], name: str, field: Any) -> str:
    text = field.description or FIELD_NOTES.get((model.__name__, name), "")
    enum = _enum_of(field.annotation)
    if enum is not None and "|" not in text:
        text = f"{text} One of {', '.join(f'`{m.value}`' for m in enum)}.".strip()
    return text.replace("|", "\\|").replace("\n", " ")


def field_table(model: type[BaseModel], title: str) -> str:
    rows = [f"#### {title}", "", "| field | type | default | description |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        kind = _type_name(field.annotation).replace("|", "\\|")
        rows.append(
            f"| `{field.alias or name}` | `{kind}` | {_default(field)} | {_description(model, name, field)} |"
        )
    return "\n".join(rows)
