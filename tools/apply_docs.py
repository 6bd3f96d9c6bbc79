"""Turn :mod:`codemods.examples` into inventories (for tests) and markdown (for the docs).

``python -m tools.apply_docs`` regenerates the examples section of ``docs/apply.md``.
"""

from __future__ import annotations

from pathlib import Path

from codemods import Status
from codemods.examples import EXAMPLES, MODULE, Example
from inventory import surroundings_at
from inventory.models import (
    Argument,
    CallSite,
    Confidence,
    Effect,
    EffectKind,
    Inventory,
    Job,
    Location,
)


def site_line(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def inventory_for(example: Example, root: Path) -> Inventory:
    """The Inventory the scanner would produce for ``example`` written at ``root/app.py``."""
    qualname = f"{MODULE}.{example.job}"
    name = example.job.rpartition(".")[2]  # a method's own name (``Image.resize``)
    site = CallSite(
        location=Location(path="app.py", line=site_line(example.before, example.site_at)),
        pattern=example.pattern,
        job=qualname,
        target_source=example.target_source,
        handler=example.handler,
        result_used=bool(example.result_used_at),
        result_use_lines=[site_line(example.before, f) for f in example.result_used_at],
        arguments=[
            Argument(name=f"#{i}", source=s, serialisable=False)
            for i, s in enumerate(example.unserialisable)
        ],
        idempotency=example.verdict,
        surroundings=surroundings_at(example.before, site_line(example.before, example.site_at)),
    )
    defined = Location(path="app.py", line=site_line(example.before, f"def {name}("))
    # The ``...`` of each example's job stands for work the scan found (an image resized):
    # a job with no effect at all would stay where its caller waits (``_select``'s rule).
    work = Effect(kind=EffectKind.IMAGE_PROCESS, location=defined, api="PIL.Image.Image.resize")
    job = Job(
        qualname=qualname,
        location=defined,
        idempotency=example.verdict,
        confidence=Confidence.HIGH,
        effects=[work],
        parameters=_parameters(example.before, name),
        is_async=f"async def {name}(" in example.before,
    )
    return Inventory(root=str(root), sites=[site], jobs=[job])


def _parameters(text: str, name: str) -> list[str]:
    line = text.splitlines()[site_line(text, f"def {name}(") - 1]
    inside = line.split("(", 1)[1].rsplit(")", 1)[0]
    return [
        p.split(":")[0].split("=")[0].strip()
        for p in inside.split(",")
        if p.strip() and p.strip() != "self"
    ]


BEGIN = "<!-- BEGIN GENERATED: python -m tools.apply_docs -->"
END = "<!-- END GENERATED -->"


def render_markdown() -> str:
    """The examples section of ``docs/apply.md``."""
    return "\n".join([BEGIN, "", *(line for e in EXAMPLES for line in _section(e)), END])


def _section(example: Example) -> list[str]:
    key = f", key `{next(iter(example.keys.values()))}`" if example.keys else ""
    head = [
        f"### {example.title}",
        "",
        f"Pattern `{example.pattern}`, `{example.verdict}` job{key}: **{example.status}**.",
        "",
    ]
    if example.status is Status.REWRITTEN:
        return [*head, "Before:", "", *_code(example.before), "After:", "", *_code(example.after)]
    return [
        *head,
        f"Left as it is; the reason given contains *{example.reason}*.",
        "",
        *_code(example.before),
    ]


def _code(text: str) -> list[str]:
    return ["```python", text.rstrip(), "```", ""]


def update_docs(path: Path) -> bool:
    """Rewrite the generated section of ``path``; True when it changed."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = head + render_markdown() + tail
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":
    print("updated" if update_docs(Path("docs/apply.md")) else "up to date")
