"""Developer tools of this repository, not shipped in any wheel: the docs generators.

- ``python -m tools.scan_docs [--check]``: ``docs/scan.md`` from its template, the
  detector and rule examples and the models (``tools/scan_docs_render.py`` renders the pieces).
- ``python -m tools.apply_docs``: the examples section of ``docs/apply.md`` from
  ``codemods.examples``; its ``inventory_for`` / ``site_line`` also build the inventories the
  codemods tests run the examples on.

The test suite imports them from the repository root (``pythonpath`` in ``pyproject.toml``).
"""
