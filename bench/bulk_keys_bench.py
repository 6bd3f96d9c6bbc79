"""Bulk enqueue with and without idempotency keys: the store's ``enqueue_many``, jobs/s.

    .venv/bin/python bench/bulk_keys_bench.py [--jobs 20000] [--batch 1000] [--repeat 3]

One fresh schema on the local PostgreSQL (dropped at the end). Three batches
of the same no-op job, each timed over ``--jobs`` jobs in ``--batch``-sized
calls, the median of ``--repeat`` runs:

- ``unkeyed``: what ``JobFunction.enqueue_many`` sends without keys (the
  direct binary COPY);
- ``keyed``: every job with a key of its own (the keys are reserved, with
  their argument digest, then the checked COPY);
- ``keyed, all known``: the same keys again (nothing inserted, every key
  answered by its job after the digest check).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from queue_runtime.payload import EncodedArgs, dumps
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import NewJob
from queue_runtime.testing import isolated_settings, pg_admin_url


def _args(i: int) -> EncodedArgs:
    payload = EncodedArgs({"i": i, "t": 0.5})
    payload.json = dumps(payload)
    return payload


def _jobs(count: int, run: int, keyed: bool) -> list[NewJob]:
    return [
        NewJob("bench.noop", "default", _args(i), idempotency_key=f"r{run}-{i}" if keyed else None)
        for i in range(count)
    ]


def _timed(store: PgJobStore, jobs: Sequence[NewJob], batch: int) -> float:
    began = time.perf_counter()
    for offset in range(0, len(jobs), batch):
        store.enqueue_many(jobs[offset : offset + batch])
    return len(jobs) / (time.perf_counter() - began)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args(argv)
    figures: dict[str, list[float]] = {"unkeyed": [], "keyed": [], "keyed, all known": []}
    with isolated_settings(pg_admin_url()) as settings:
        pool = open_pool(settings, max_size=2)
        store = PgJobStore(pool, settings)
        try:
            for run in range(options.repeat):
                cases = [
                    ("unkeyed", False),
                    ("keyed", True),
                    ("keyed, all known", True),  # the same keys again
                ]
                for name, keyed in cases:
                    batch = _jobs(options.jobs, run, keyed=keyed)
                    figures[name].append(_timed(store, batch, options.batch))
        finally:
            pool.close()
    for name, values in figures.items():
        print(
            f"{name:18} {statistics.median(values):>10,.0f} jobs/s  (runs: "
            + ", ".join(f"{v:,.0f}" for v in values)
            + ")"
        )


if __name__ == "__main__":
    main()
