"""What each ``migrator`` command shows: its tables and text, from its library's typed outcome.

One module (or folder) per command: :mod:`~migrator.render.scan` (table, JSON,
SARIF, Markdown), :mod:`~migrator.render.plan`, :mod:`~migrator.render.apply`,
:mod:`~migrator.render.gate`, :mod:`~migrator.render.rollout`,
:mod:`~migrator.render.loadtest`; the terminal (:mod:`~migrator.render.console`)
and the scan's progress bar (:mod:`~migrator.render.progress`). Renderers read
outcomes and never compute them; nothing here is imported until a command needs it.
"""
