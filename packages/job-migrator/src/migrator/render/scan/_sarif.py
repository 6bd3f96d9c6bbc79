"""SARIF 2.1.0 for GitHub code scanning: one rule per verdict, one result per site.

URIs are relative to ``%SRCROOT%``: the git work tree containing the scanned
root (so a scan of ``examples/shop`` still points at the right files on
GitHub), or the scanned root itself outside git. ``partialFingerprints``
carries the site fingerprint, which ignores line numbers, so code scanning
keeps tracking an alert when lines move.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from inventory import CallSite, Idempotency, Location, ScanError
from migrator.render.scan.view import VERDICT_ORDER, JobGroup, ReportView

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/job-migrator/job-migrator/blob/main/docs/scan.md"
FINGERPRINT_KEY = "migratorSite/v1"

RULES: dict[Idempotency, tuple[str, str, str, str]] = {
    # verdict: (id, name, level, description)
    Idempotency.UNSAFE: (
        "MIG-UNSAFE",
        "UnsafeInProcessJob",
        "error",
        "In-process job moves money or account state: never run it twice.",
    ),
    Idempotency.NON_IDEMPOTENT: (
        "MIG-NON-IDEMPOTENT",
        "NonIdempotentInProcessJob",
        "warning",
        "In-process job acts again when it is retried.",
    ),
    Idempotency.NEEDS_KEY: (
        "MIG-NEEDS-KEY",
        "InProcessJobNeedsKey",
        "warning",
        "In-process job is safe to retry only with an idempotency key.",
    ),
    Idempotency.UNKNOWN: (
        "MIG-UNKNOWN",
        "UnclassifiedInProcessJob",
        "note",
        "In-process job whose effects could not be determined.",
    ),
    Idempotency.IDEMPOTENT: (
        "MIG-IDEMPOTENT",
        "IdempotentInProcessJob",
        "note",
        "In-process job that is safe to retry: move it to the queue first.",
    ),
}


def _rule(verdict: Idempotency) -> dict[str, Any]:
    rule_id, name, level, description = RULES[verdict]
    return {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": description},
        "fullDescription": {"text": f"{description} Verdict: {verdict.value}."},
        "helpUri": f"{INFORMATION_URI}#verdicts",
        "help": {"text": f"{description} See docs/scan.md, section Verdicts."},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["background-jobs", "idempotency"]},
    }


def _source_root(root: Path) -> Path:
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return root


class _Uris:
    def __init__(self, root: Path) -> None:
        self.base = _source_root(root)
        self.prefix = os.path.relpath(root, self.base).replace(os.sep, "/")

    def uri(self, path: str) -> str:
        return path if self.prefix == "." else f"{self.prefix}/{path}"

    def location(self, where: Location) -> dict[str, Any]:
        # Location.column is Python's 0-based col_offset; SARIF columns start at 1.
        region = {"startLine": where.line, "startColumn": where.column + 1}
        artifact = {"uri": self.uri(where.path), "uriBaseId": "%SRCROOT%"}
        return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _message(group: JobGroup, site: CallSite) -> str:
    evidence = group.top_evidence
    why = (
        f" {evidence.message}"
        if evidence
        else (f" {site.unresolved_reason}" if site.unresolved_reason else "")
    )
    return f"`{group.qualname}` runs in-process ({site.pattern.value}) and is {group.verdict.value}.{why}"


def _result(group: JobGroup, site: CallSite, uris: _Uris, has_baseline: bool) -> dict[str, Any]:
    rule_id, _, level, _ = RULES[group.verdict]
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": VERDICT_ORDER.index(group.verdict),
        "level": level,
        "message": {"text": _message(group, site)},
        "locations": [uris.location(site.location)],
        "partialFingerprints": {FINGERPRINT_KEY: site.fingerprint},
        "properties": {
            "job": group.qualname,
            "pattern": site.pattern.value,
            "confidence": group.job.confidence.value if group.job else "low",
        },
    }
    if has_baseline:
        result["baselineState"] = "unchanged" if site.baselined else "new"
    return result


def _notification(error: ScanError, uris: _Uris) -> dict[str, Any]:
    return {
        "level": "warning",
        "message": {"text": f"{error.path} not scanned ({error.kind.value}): {error.reason}"},
        "locations": [uris.location(Location(path=error.path, line=1))],
    }


def sarif_document(view: ReportView) -> dict[str, Any]:
    inventory = view.inventory
    uris = _Uris(Path(inventory.root))
    driver = {
        "name": "migrator",
        "version": inventory.tool_version or "0",
        "informationUri": INFORMATION_URI,
        "rules": [_rule(verdict) for verdict in VERDICT_ORDER],
    }
    results = [_result(g, s, uris, view.baseline_given) for g in view.groups for s in g.sites]
    invocation = {
        "executionSuccessful": True,
        "toolExecutionNotifications": [_notification(e, uris) for e in inventory.errors],
    }
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": uris.base.as_uri() + "/"}},
        "invocations": [invocation],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(view: ReportView) -> str:
    return json.dumps(sarif_document(view), indent=2) + "\n"
