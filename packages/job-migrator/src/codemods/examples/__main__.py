"""``python -m codemods.examples``: regenerate the examples section of ``docs/apply.md``."""

from __future__ import annotations

from pathlib import Path

from codemods.examples._doc import update_docs

if __name__ == "__main__":
    print("updated" if update_docs(Path("docs/apply.md")) else "up to date")
