"""The pull-request description for one branch: what moved, why it is safe, how to undo it."""

from __future__ import annotations

from codemods._select import guarded_verdict
from codemods._types import ApplyResult, SiteOutcome, Status
from inventory.models import Idempotency, Inventory, Job, Location

ROLLBACK = """## Rollback

No revert needed: every moved function is still callable in-process. Set

```toml
[tool.queue_runtime]
mode = "inline"
```

(or `QUEUE_RUNTIME_MODE=inline` in the environment) and `enqueue` runs the job
at once, in the caller's process, exactly as before. Revert this branch only to
remove the code change itself.
"""

ROLLBACK_202 = """
Exception: the request handlers rewritten to answer `202 Accepted` (sites above
whose caller used the result) have a new API; inline mode does not restore
their old response. Revert their commits to roll them back.
"""


GUARDED = """## Merging this alters no behaviour until the job is certified

{jobs} {verb} not idempotent: {pronoun} {verb} registered with the runtime's execution
guard (`@job(..., idempotency=...)`) and every rewritten site passes an
`idempotency_key=` built from the call's own arguments. The gate keeps an
uncertified non-idempotent job **inline**: `enqueue` runs it at once, in the
caller's process, exactly as before. Nothing runs on a worker until a load test
certifies the job for its current code (`migrator loadtest JOB --sandbox ...
--chaos kill-workers,redis-restart,pg-terminate`) *and* its rollout mode is
raised (`migrator rollout set JOB 25%`, then `async`). Changing the job's code
closes the gate again until it is re-certified.
"""

HELD_UNKNOWN = """## Jobs moved before their verdict was decided: held inline

The scan could not decide whether {jobs} {verb} safe to run twice (what each job's
sites say it could not follow is listed below). {Pronoun} {verb} registered
`@job(..., idempotency="unknown")`, and the gate keeps such a job **inline**: `enqueue`
runs it at once, in the caller's process, the way the site ran it before. It goes to
a worker only once its verdict is decided `idempotent` (explain the calls the scan
could not follow, or pin the verdict after review, then `migrator scan`; the runtime
reads the verdict from `inventory_path`) or a load test certifies its current code,
*and* its rollout mode is raised.
"""

DELIVERY = """## Django mail: built in the request, delivered by a worker

The rewritten Django mail calls (`django_mail.send_mail(...)`, `django_mail.send(msg)`)
build the message exactly as before, in the request, with the same arguments:
templates rendered, lazy translations forced in the request's language, rows read.
Only the delivery is queued: a JSON copy of the built message for the runtime's
own job `queue_runtime.django_mail.deliver`, one job per send, its `Message-ID`
given in the request.
A message the queue cannot carry (a subclass of Django's classes, a connection of
its own, a MIME attachment, one over the payload limit) is sent in the request, as
before. {jobs} {verb} not moved: {pronoun} still {run} in the request.

Delivery is not idempotent (a worker killed after the server took the mail sends
it again, with the same `Message-ID`), so the gate keeps it **inline** (sent in the
caller, as before) until a load test certifies it
(`migrator loadtest queue_runtime.django_mail.deliver --sandbox ... --chaos
kill-workers`) *and* its rollout is raised (`migrator rollout set
queue_runtime.django_mail.deliver async`). A worker delivers with
`queue-runtime worker queue_runtime.django_mail --django-settings SETTINGS` (or any
module that imports it).

The application's tests: in inline mode (`QUEUE_RUNTIME_MODE=inline`, and under
pytest by default) the message is delivered in the test process, through the
test's email backend: `django.core.mail.outbox` has it, as before. A test that
patched `module.send_mail` no longer intercepts these calls: read the outbox, or
patch `queue_runtime.django_mail.send_mail`.
"""

ARGUMENTS = """## How each argument crosses into the queue

Nothing here had to be proven storable: the runtime encodes each argument at
enqueue. **JSON**: plain data, proven from the code. **codec**: a runtime codec
carries it (a model instance by reference, model and primary key, read again by
the worker, so unsaved changes are not carried; a model class by label; dates,
`Decimal`, `UUID`, enums, dataclasses, pydantic and attrs objects as tagged
JSON). **checked at run time**: not proven either way; a call whose argument
cannot be encoded runs in-process exactly as the site ran it before (a call, a
thread, an executor, a task) and is counted, and the job is promoted to a
worker only on clean shadow evidence (`migrator rollout status`).

"""

TESTS = """## Tests of the application

Run the test suite in inline mode (`QUEUE_RUNTIME_MODE=inline`, or
`mode = "inline"` in the test settings): every `enqueue` runs the job at once,
so assertions on its effects (an in-process mail outbox, rows written) still
hold. The rewritten sites call `job.enqueue(...)` on the same name, so
`mock.patch("module.job")` still intercepts them; a mock that asserted a direct
call (`mocked.assert_called_once_with(x)`) now sees `mocked.enqueue(x, ...)`:
update such assertions to `mocked.enqueue.assert_called_once_with(...)`.
Under pytest, queue_runtime's plugin runs jobs inline on in-memory stores per test and never opens the configured database; `@pytest.mark.queue_runtime(mode="manual")` holds enqueues for `enqueued_jobs()`, `assert_enqueued(job, **args)` and `drain()` (docs/runtime.md).
"""


def _about(template: str, jobs: list[str]) -> str:
    """A section about ``jobs``, its verbs and pronouns agreeing with how many there are."""
    many = len(jobs) > 1
    return template.format(
        jobs=", ".join(f"`{q}`" for q in jobs),
        verb="are" if many else "is",
        pronoun="they" if many else "it",
        Pronoun="They" if many else "It",
    )


def render(
    name: str, jobs: list[str], result: ApplyResult, inventory: Inventory, base: str | None = None
) -> str:
    """Markdown for the branch ``name`` that moves ``jobs``."""
    mine = [o for o in result.outcomes if o.site.job in jobs]
    delivered = [q for q in jobs if result.delivered_only(q)]
    title = (
        f"# Deliver the Django mail of {len(jobs)} job(s) from queue_runtime workers ({name})\n"
        if len(delivered) == len(jobs)
        else f"# Move {len(jobs)} job(s) onto queue_runtime ({name})\n"
    )
    parts = [title]
    if base:
        parts.append(f"Based on `{base}`: merge that one first.\n")
    parts.append("## What moved and why it is safe\n")
    parts.extend(_job_section(job_record(result, inventory, q), q) for q in jobs)
    records = {q: j for q in jobs if q not in delivered and (j := job_record(result, inventory, q))}
    guarded = [q for q, j in records.items() if guarded_verdict(j)]
    if guarded:
        parts.append(_about(GUARDED, guarded))
    held = [q for q, j in records.items() if j.idempotency is Idempotency.UNKNOWN]
    if held:
        parts.append(_about(HELD_UNKNOWN, held))
    if delivered:
        many = len(delivered) > 1
        parts.append(
            DELIVERY.format(
                jobs=", ".join(f"`{q}`" for q in delivered),
                verb="are" if many else "is",
                pronoun="they" if many else "it",
                run="run" if many else "runs",
            )
        )
    changed = [o for o in mine if o.status is Status.REWRITTEN]
    parts.append(_sites("Sites changed", changed))
    if any(o.crossings for o in changed):
        parts.append(ARGUMENTS + _arguments(changed))
    parts.append(_sites("Sites left alone", [o for o in mine if o.status is not Status.REWRITTEN]))
    if base is None:
        others = [o for o in result.outcomes if o.site.job not in result.jobs]
        parts.append(_sites("Other sites not moved, and why", others))
    accepted = any(o.site.result_used for o in mine if o.status is Status.REWRITTEN)
    if result.worker:
        parts.append(f"## What the workers need\n\n{result.worker}\n")
    parts.append(ROLLBACK + (ROLLBACK_202 if accepted else ""))
    if len(delivered) < len(jobs):
        parts.append(TESTS)
    parts.append(_checklist(jobs, inventory, delivered))
    return "\n".join(p for p in parts if p)


def job_record(result: ApplyResult, inventory: Inventory, qualname: str) -> Job | None:
    """The plan's own record of a moved job; the caller's inventory only for one it lacks."""
    return result.record(qualname) or inventory.job(qualname)


def _job_section(job: Job | None, qualname: str) -> str:
    if job is None:
        return f"### `{qualname}`\n\n(no longer in the inventory)\n"
    lines = [f"### `{job.qualname}`: {job.idempotency} ({job.confidence} confidence)\n"]
    lines += [f"- {e.message}{_at(e.location)}{_chain(e.chain)}" for e in job.evidence]
    lines += [
        f"- effect `{f.kind}` via `{f.api}`{_at(f.location)}{_chain(f.chain)}" for f in job.effects
    ]
    if not job.evidence and not job.effects:
        lines.append("- no side effects found in the job or anything it calls")
    return "\n".join(lines) + "\n"


def _at(location: Location | None) -> str:
    return f" ({location.path}:{location.line})" if location else ""


def _chain(chain: list[str]) -> str:
    return f" [{' -> '.join(chain)}]" if chain else ""


def _sites(title: str, outcomes: list[SiteOutcome]) -> str:
    if not outcomes:
        return ""
    rows = [f"## {title}\n", "| site | pattern | job | outcome |", "|---|---|---|---|"]
    for o in outcomes:
        loc = o.site.location
        note = o.status.value + (f": {o.reason}" if o.reason else "")
        rows.append(f"| `{loc.path}:{loc.line}` | {o.site.pattern} | `{o.site.job}` | {note} |")
    return "\n".join(rows) + "\n"


def _arguments(outcomes: list[SiteOutcome]) -> str:
    rows = ["| site | argument | crosses as |", "|---|---|---|"]
    for o in outcomes:
        loc = f"`{o.site.location.path}:{o.site.location.line}`"
        rows += [f"| {loc} | `{c.source.strip()}` | {c.describe()} |" for c in o.crossings]
    return "\n".join(rows) + "\n"


def _checklist(jobs: list[str], inventory: Inventory, delivered: list[str]) -> str:
    items = ["## Rollout checklist items this advances\n"]
    for q in jobs:
        count = len(inventory.sites_of(q))
        done = "Django mail calls deliver" if q in delivered else "call sites enqueue"
        items.append(
            f"- [x] `{q}`: {done} through queue_runtime ({count} site(s) in the inventory)"
        )
        items.append(f"- [ ] `{q}`: deployed in inline mode, then switched to queue mode per job")
    items.append("- [ ] workers running with leasing, retries and the dead-letter queue verified")
    return "\n".join(items) + "\n"
