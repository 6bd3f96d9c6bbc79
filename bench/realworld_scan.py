"""Scan pinned real-world projects with ``migrator scan`` and summarise the results.

Usage: ``.venv/bin/python bench/realworld_scan.py [--only NAME,...] [--no-cache] [--jobs N] [--head]``

``--head`` runs the analyzer of the last commit (``git archive HEAD`` into
``bench/_work/realworld/_head``, first on ``PYTHONPATH``) instead of the
working tree, so a scan is not broken by half-saved edits in progress.

Downloads each pinned distribution below with pip (a wheel when one exists,
else the sdist; ``--no-deps``) into ``bench/_work/realworld/dl`` (once),
unpacks it into ``bench/_work/realworld/<name>``, then runs, in a fresh
process as a user would::

    migrator scan <tree> --format json -o bench/_work/realworld/<name>.json

and prints, per project: files scanned, wall seconds, exit status, sites per
pattern, jobs per verdict, scan errors per kind. A crash (non-zero exit, no
JSON, or a traceback on standard error) is printed in full: it is the most
important finding. The per-project JSON stays next to the tree for reading.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work" / "realworld"
DL = WORK / "dl"
BIN = Path(sys.executable).parent

# name -> (pip requirement, what to scan inside the unpacked distribution)
PROJECTS: dict[str, tuple[str, str]] = {
    "wagtail": ("wagtail==6.3.1", "wagtail"),
    "allauth": ("django-allauth==65.13.0", "allauth"),
    "djangocms": ("django-cms==4.1.4", "cms"),
    "flask_security": ("flask-security-too==5.5.2", "flask_security"),
    "fastapi_users": ("fastapi-users==14.0.0", "fastapi_users"),
    "superset": ("apache-superset==4.1.1", "superset"),
    "apscheduler": ("apscheduler==3.11.0", "apscheduler"),
    "schedule": ("schedule==1.2.2", "schedule"),
    "locust": ("locust==2.32.4", "locust"),
    "gunicorn": ("gunicorn==23.0.0", "gunicorn"),
    "celery": ("celery==5.4.0", "celery"),
    "litellm": ("litellm==1.55.0", "litellm"),
    "oscar": ("django-oscar==3.2.5", "oscar"),
    "helpdesk": ("django-helpdesk==1.1.0", "helpdesk"),
}


def _archive(req: str) -> Path:
    """The downloaded wheel or sdist of ``req`` (downloaded on first use)."""
    name, version = req.split("==")
    stems = {name.lower().replace("-", "_"), name.lower(), name}

    def found() -> Path | None:
        for path in sorted(DL.iterdir()):
            low = path.name.lower()
            if any(low.startswith(f"{s.lower()}-{version}") for s in stems):
                return path
        return None

    DL.mkdir(parents=True, exist_ok=True)
    if (hit := found()) is not None:
        return hit
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(DL), req]
    if subprocess.run([*pip, "--only-binary", ":all:"], check=False).returncode != 0:
        subprocess.run([*pip, "--no-binary", ":all:"], check=True)
    if (hit := found()) is None:
        raise SystemExit(f"pip did not leave an archive for {req} in {DL}")
    return hit


def _tree(name: str, req: str, inner: str) -> Path:
    """The unpacked package folder to scan."""
    target = WORK / name
    if not target.is_dir():
        archive = _archive(req)
        target.mkdir(parents=True)
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as whl:
                whl.extractall(target)
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(target, filter="data")
    hits = [p for p in [target / inner, *target.glob(f"*/{inner}")] if p.is_dir()]
    if not hits:
        raise SystemExit(f"{inner}/ not found under {target}")
    return hits[0]


def head_source() -> Path:
    """The analyzer packages of ``git HEAD``, exported afresh."""
    repo = HERE.parent
    dest = WORK / "_head"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "archive",
            "HEAD",
            "inventory",
            "migrator",
            "codemods",
            "queue_runtime",
        ],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def scan(
    name: str,
    tree: Path,
    no_cache: bool,
    jobs: int | None,
    src: Path | None = None,
    timeout: float | None = None,
) -> dict:
    out = WORK / f"{name}.json"
    out.unlink(missing_ok=True)
    cmd = [str(BIN / "migrator"), "scan", str(tree), "--format", "json", "-o", str(out)]
    if no_cache:
        cmd.append("--no-cache")
    if jobs:
        cmd += ["--jobs", str(jobs)]
    start = time.perf_counter()
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH", "")]))
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, check=False, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        seconds = time.perf_counter() - start
        return {"name": name, "seconds": seconds, "rc": "TIMEOUT", "stderr": "", "crash": True}
    seconds = time.perf_counter() - start
    row: dict = {"name": name, "seconds": seconds, "rc": proc.returncode, "stderr": proc.stderr}
    if not out.exists():
        row["crash"] = True
        return row
    inv = json.loads(out.read_text())
    row["files"] = inv["stats"]["files_scanned"] + inv["stats"].get("files_cached", 0)
    row["lines"] = inv["stats"]["lines"]
    row["patterns"] = collections.Counter(s["pattern"] for s in inv["sites"])
    row["verdicts"] = collections.Counter(j["idempotency"] for j in inv["jobs"])
    row["errors"] = collections.Counter(e["kind"] for e in inv["errors"])
    row["unresolved"] = sum(1 for s in inv["sites"] if s["job"] == "unknown")
    row["crash"] = proc.returncode != 0 or "Traceback" in proc.stderr
    row["internal"] = [e for e in inv["errors"] if e["kind"] == "internal"]
    return row


def _fmt(counter: collections.Counter) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(counter.items())) or "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated project names")
    ap.add_argument(
        "--no-cache", action="store_true", help="pass --no-cache to the scan (cold timing)"
    )
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds per project before it counts as a hang",
    )
    ap.add_argument(
        "--head", action="store_true", help="run the analyzer of git HEAD, not the working tree"
    )
    args = ap.parse_args()
    src = head_source() if args.head else None
    names = [n for n in args.only.split(",") if n] or list(PROJECTS)
    rows = []
    for name in names:
        req, inner = PROJECTS[name]
        tree = _tree(name, req, inner)
        row = scan(name, tree, args.no_cache, args.jobs, src, args.timeout)
        row["req"] = req
        rows.append(row)
        status = "HANG" if row["rc"] == "TIMEOUT" else "CRASH" if row["crash"] else "ok"
        print(
            f"{name:15} {status:5} {row['seconds']:7.2f}s files={row.get('files', '?')}", flush=True
        )
        if row["crash"] and row["stderr"]:
            print(row["stderr"][-4000:], file=sys.stderr)
        for err in row.get("internal", []):
            print(f"  internal error: {err['path']}: {err['reason'][:300]}", file=sys.stderr)

    print()
    head = (
        f"{'project':15} {'files':>6} {'lines':>7} {'secs':>6} {'rc':>3} {'sites':>5} {'unres':>5}"
    )
    print(head + "  sites per pattern | jobs per verdict | errors per kind")
    for r in rows:
        if "patterns" not in r:
            print(
                f"{r['name']:15} {'HANG' if r['rc'] == 'TIMEOUT' else 'CRASH'} rc={r['rc']} after {r['seconds']:.0f}s"
            )
            continue
        print(
            f"{r['name']:15} {r['files']:6} {r['lines']:7} {r['seconds']:6.1f} {r['rc']:3} "
            f"{sum(r['patterns'].values()):5} {r['unresolved']:5}  "
            f"{_fmt(r['patterns'])} | {_fmt(r['verdicts'])} | {_fmt(r['errors'])}"
        )
    return 1 if any(r["crash"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
