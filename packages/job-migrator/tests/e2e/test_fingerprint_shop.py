"""Every job of examples/shop has one fingerprint, whatever the process's hash seed.

Workers run with random seeds: a fingerprint that depends on it opens or closes
the gate at each restart. The jobs are the ones the analyzer finds in the
example (they reach dataclasses, closures, lambdas and properties); each seed
computes all of them in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inventory import scan

SHOP = Path(__file__).resolve().parents[4] / "examples" / "shop"
PRINT_FINGERPRINTS = """
import importlib, json, sys
from queue_runtime.gate import fingerprint
sys.path.insert(0, sys.argv[1])

def resolve(qualname):
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)
        return target
    raise LookupError(qualname)

print(json.dumps({name: fingerprint(resolve(name)) for name in sys.argv[2:]}))
"""


def _fingerprints(seed: int, jobs: list[str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", PRINT_FINGERPRINTS, str(SHOP), *jobs],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        cwd=SHOP,
    )
    found: dict[str, str] = json.loads(done.stdout)
    return found


def test_every_job_of_the_shop_has_one_fingerprint_under_seeds_0_to_5() -> None:
    jobs = sorted(job.qualname for job in scan(SHOP).jobs)
    assert "shop.mail.send_receipt" in jobs and len(jobs) >= 10
    runs = [_fingerprints(seed, jobs) for seed in range(6)]
    assert sorted(runs[0]) == jobs
    differing = {name for name in jobs if len({run[name] for run in runs}) > 1}
    assert differing == set()
