"""A job is still the function it decorates for code that hands it to another process.

``@job`` replaces a module-level function with a :class:`JobFunction`. Code that apply
did not move may still hand that function to a process pool or ``multiprocessing``
(a CLI's batch, a report split over cores), which pickles it: a function pickles by
reference, its module and name, and so must the job, or that other code breaks with
"it's not the same object" once one site of the function has moved.
"""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from queue_runtime import job
from queue_runtime.registry import Registry

jobs = Registry()


@job(name="tests.pickling.shout", pool="batch", registry=jobs, idempotent=True)
def shout(text: str) -> str:
    return text.upper()


@dataclass
class Label:
    text: str

    @job(name="tests.pickling.Label.render", pool="batch", registry=jobs, idempotent=True)
    def render(self, suffix: str) -> str:
        return self.text + suffix


def test_a_job_pickles_by_reference_as_its_function_did() -> None:
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(shout, protocol=protocol)
        assert pickle.loads(data) is shout
        assert b"Registry" not in data  # a reference, not the job's state


def test_a_method_job_pickles_from_its_class_and_bound_to_an_instance() -> None:
    assert pickle.loads(pickle.dumps(Label.render)) is Label.render
    bound = pickle.loads(pickle.dumps(Label("ab").render))
    assert bound("!") == "ab!"


def test_a_process_pool_runs_a_job_handed_to_it() -> None:
    """Spawned, as on macOS and Windows: the child imports this module by name."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        assert pool.submit(shout, "done").result(timeout=60) == "DONE"
        assert list(pool.map(shout, ["a", "b"], timeout=60)) == ["A", "B"]
