"""The RuleExample model and helpers to write examples briefly."""

from __future__ import annotations

from textwrap import dedent

from pydantic import BaseModel, Field

from inventory.models import EffectKind, Idempotency

K = EffectKind
V = Idempotency


class RuleExample(BaseModel):
    title: str
    files: dict[str, str] = Field(
        description="POSIX path -> source; dedented when rendered and run."
    )
    job: str = Field(description="Qualified name of the job whose verdict is checked.")
    expected_verdict: Idempotency
    expected_effect_kinds: set[EffectKind]
    why: str
    pyproject: str = Field(
        default="", description="The scanned project's pyproject.toml, if it matters."
    )
    evidence_mentions: str = Field(default="", description="Text one evidence line must contain.")

    def sources(self) -> dict[str, str]:
        return {path: dedent(text).lstrip() for path, text in self.files.items()}


def starter(module: str, name: str) -> str:
    """A request handler that runs ``name`` in a thread: what makes it a job."""
    return f"""
        import threading
        from {module} import {name}

        def view(request):
            threading.Thread(target={name}, args=(request.user.id,)).start()
    """


def example(
    title: str,
    job_source: str,
    job: str,
    verdict: Idempotency,
    kinds: set[EffectKind],
    why: str,
    *,
    more_files: dict[str, str] | None = None,
    pyproject: str = "",
    evidence_mentions: str = "",
) -> RuleExample:
    """A one-module job in ``shop/jobs.py`` started from ``shop/views.py``."""
    files = {
        "shop/__init__.py": "",
        "shop/jobs.py": job_source,
        "shop/views.py": starter("shop.jobs", job),
        **(more_files or {}),
    }
    return RuleExample(
        title=title,
        files=files,
        job=f"shop.jobs.{job}",
        expected_verdict=verdict,
        expected_effect_kinds=kinds,
        why=why,
        pyproject=pyproject,
        evidence_mentions=evidence_mentions,
    )
