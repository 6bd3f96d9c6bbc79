"""Every benchmarked queue by name, made on demand.

Each tool's module is imported only when its turn comes: a tool that cannot even be
imported fails its own column (or row), not the run.
"""

from __future__ import annotations

from collections.abc import Callable

from bench._peers.tool import Tool


def _ours(ours_worker_args: str) -> Tool:
    from bench._peers.ours_tool import OursTool

    return OursTool(ours_worker_args.split())


def _pgqueuer(ours_worker_args: str) -> Tool:
    from bench._peers.pgqueuer_tool import PgqueuerTool

    return PgqueuerTool()


def _procrastinate(ours_worker_args: str) -> Tool:
    from bench._peers.procrastinate_tool import ProcrastinateTool

    return ProcrastinateTool()


# name -> factory taking ``queue-runtime worker`` options for ours (tuning runs only; "" is
# the default worker every reported comparison uses)
TOOLS: dict[str, Callable[[str], Tool]] = {
    "ours": _ours,
    "pgqueuer": _pgqueuer,
    "procrastinate": _procrastinate,
}
