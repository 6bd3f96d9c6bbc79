"""The progress bar shows on terminals and long scans, and never starts a thread."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from migrator.render.progress import ScanProgress


def console(terminal: bool) -> tuple[Console, io.StringIO]:
    text = io.StringIO()
    return Console(file=text, force_terminal=terminal, width=80), text


def test_terminal_gets_a_bar_that_reaches_the_total_without_a_thread() -> None:
    out, text = console(terminal=True)
    threads = threading.active_count()
    with ScanProgress(out) as progress:
        for done in range(0, 11):
            progress(done, 10)
        assert threading.active_count() == threads  # the scan may fork workers
    assert "10/10" in text.getvalue()


def test_short_scan_without_a_terminal_shows_nothing() -> None:
    out, text = console(terminal=False)
    with ScanProgress(out) as progress:
        progress(0, 10)
        progress(10, 10)
    assert text.getvalue() == ""


def test_fully_cached_scan_shows_nothing_even_on_a_terminal() -> None:
    out, text = console(terminal=True)
    with ScanProgress(out) as progress:
        progress(500, 500)
    assert text.getvalue() == ""
