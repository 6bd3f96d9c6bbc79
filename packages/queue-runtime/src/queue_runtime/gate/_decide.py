"""The gate decision at enqueue: classification, rollout mode, certification.

In order:

1. The job's classification: declared in code (``@job(idempotency=...)``,
   ``idempotent=True/False``) and, when ``Settings.inventory_path`` is set,
   the analyzer's verdict. ``idempotent=True`` against a ``non_idempotent`` /
   ``unsafe`` verdict is refused (:class:`ClassificationConflict`) unless
   ``[tool.queue_runtime.jobs."NAME"] override_reason`` says why.
2. The rollout mode (stored in PostgreSQL, cached per process): ``inline``
   runs in-process; ``percent`` sends that share async (deterministic per
   idempotency key, random without one); ``async`` sends all.
3. The gate, for enqueues that would go async: a gated job (non_idempotent or
   unsafe, or declared ``idempotency="unknown"`` while the inventory does not say
   ``idempotent``: ``migrator apply --job`` moves a job the analyzer could not decide
   that way; ``gate._model.held``) needs a valid certification for its current
   fingerprint; without one it runs inline (``gate_action = "inline"``, counted in
   ``gate_inline_total{job}``) or :class:`GateClosed` is raised.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from queue_runtime.config import GateAction, Idempotency, RolloutMode
from queue_runtime.definition import Defined, JobDefinition
from queue_runtime.errors import ConfigError
from queue_runtime.gate._metrics import count_gate_inline
from queue_runtime.gate._model import (
    GATED,
    ClassificationConflict,
    Decision,
    GateClosed,
    held,
    level_of,
)
from queue_runtime.gate.fingerprint import fingerprint

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

_fingerprints: weakref.WeakKeyDictionary[Callable[..., Any], str] = weakref.WeakKeyDictionary()
_fingerprints_lock = threading.Lock()


def current_fingerprint(job: Defined) -> str:
    """The fingerprint of the loaded code, computed once per function object in this process."""
    fn = job.definition.fn
    with _fingerprints_lock:
        found = _fingerprints.get(fn)
    if found is None:
        found = fingerprint(fn)
        with _fingerprints_lock:
            _fingerprints[fn] = found
    return found


def declared(job: Defined) -> Idempotency | None:
    """What the code says: ``idempotency=``, else ``idempotent=True/False`` when given, else None."""
    return job.definition.idempotency


def inventory_verdicts(runtime: Runtime) -> dict[str, Idempotency]:
    """Job qualname -> verdict from ``Settings.inventory_path`` (plain JSON; read once per Runtime)."""
    cache = runtime.gate_cache
    found = cache.inventory
    if found is None:  # two threads may both read it: the same answer, no lock needed
        found = cache.inventory = _read_inventory(runtime.settings.inventory_path)
    return found


def _read_inventory(path: str | None) -> dict[str, Idempotency]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"inventory_path {path}: cannot read it: {exc}") from exc
    verdicts: dict[str, Idempotency] = {}
    for entry in data.get("jobs", []) if isinstance(data, dict) else []:
        try:
            verdicts[str(entry["qualname"])] = Idempotency(entry["idempotency"])
        except (KeyError, TypeError, ValueError):
            continue  # a newer inventory's entry we do not understand: no verdict
    return verdicts


def classification(runtime: Runtime, job: Defined) -> Idempotency:
    """The job's effective idempotency; raises ClassificationConflict on an unexplained disagreement."""
    jf = job.definition
    classes = runtime.gate_cache.classes  # computed once per job function and Runtime
    key = (jf.name, id(jf.fn))
    found = classes.get(key)
    if found is None:
        found = classes[key] = _classify(runtime, jf)
    return found


def _classify(runtime: Runtime, jf: JobDefinition) -> Idempotency:
    code = jf.idempotency
    verdict = inventory_verdicts(runtime).get(jf.name)
    config = runtime.settings.jobs.get(jf.name)
    reason = (config.override_reason or "").strip() if config else ""
    if code is Idempotency.IDEMPOTENT and verdict in GATED:
        if not reason:
            raise ClassificationConflict(
                f"{jf.name} is declared idempotent but the inventory classifies it {verdict}; "
                f'fix the job, or set [tool.queue_runtime.jobs."{jf.name}"] override_reason = "why"'
            )
        return Idempotency.IDEMPOTENT
    return level_of(code, verdict) or Idempotency.UNKNOWN


def is_gated(runtime: Runtime, job: Defined) -> bool:
    return held(declared(job), classification(runtime, job))


def gate_decision(runtime: Runtime, job: Defined, idempotency_key: str | None = None) -> Decision:
    """Where the next enqueue of ``job`` runs (raises GateClosed in raise mode)."""
    job_function = job.definition
    gated = is_gated(runtime, job_function)
    cache = runtime.gate_cache
    rollout = cache.rollout(job_function.name)
    mode = rollout.mode if rollout else runtime.settings.default_rollout
    if mode is RolloutMode.INLINE:
        return Decision(False, "rollout: inline")
    reason = "rollout: async"
    if mode is RolloutMode.PERCENT:
        share = rollout.percent if rollout else 0
        if not _in_share(job_function.name, idempotency_key, share):
            return Decision(False, f"rollout: {share}%, this enqueue inline")
        reason = f"rollout: {share}%, this enqueue async"
    if not gated:
        return Decision(True, reason)
    fp = current_fingerprint(job_function)
    if cache.certified(job_function.name, fp):
        return Decision(True, f"{reason}; certified at {fp[:12]}")
    level = classification(runtime, job_function)
    closed = (
        f"gate closed: {job_function.name} is {level} "
        f"and not certified for its current code (fingerprint {fp[:12]})"
    )
    if level is Idempotency.UNKNOWN:
        closed += (
            ": it was moved before the analyzer decided its verdict; decide it (a catalogue "
            "entry or a pinned verdict, then `migrator scan`, with inventory_path set) or "
            "certify it with `migrator loadtest`"
        )
    if runtime.settings.gate_action is GateAction.RAISE:
        raise GateClosed(closed)
    count_gate_inline(job_function.name)
    return Decision(False, closed)


def _in_share(job: str, key: str | None, percent: int) -> bool:
    if percent >= 100:
        return True
    if percent <= 0:
        return False
    if key is None:
        return random.random() * 100 < percent
    digest = hashlib.sha256(f"{job}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100 < percent
