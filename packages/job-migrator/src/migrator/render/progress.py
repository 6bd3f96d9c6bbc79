"""Progress on stderr: the scan's bar (only when someone can see it or waits long), a status line."""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

LONG_SCAN_FILES = 200


class ScanProgress:
    """A ``progress(done, total)`` callback that shows a rich bar when worthwhile."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    @classmethod
    def on_stderr(cls) -> ScanProgress:
        return cls(Console(stderr=True))

    def __enter__(self) -> ScanProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def _worthwhile(self, done: int, total: int) -> bool:
        return total > done and (self.console.is_terminal or total > LONG_SCAN_FILES)

    def __call__(self, done: int, total: int) -> None:
        if self._progress is None:
            if not self._worthwhile(done, total):
                return
            self._progress, self._task = _start(self.console, total)
        assert self._task is not None
        self._progress.update(self._task, completed=done, total=total)
        self._progress.refresh()


def _start(console: Console, total: int) -> tuple[Progress, TaskID]:
    # Imported on first use: most scans (warm, small) never show a bar.
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # No refresh thread: the scan may fork workers, which is only safe while
    # this process runs a single thread. The bar redraws on each update.
    progress = Progress(*columns, console=console, transient=True, auto_refresh=False)
    task = progress.add_task("scan", total=total)
    progress.start()
    return progress, task


def status(message: str) -> AbstractContextManager[object]:
    """A spinner with ``message`` on stderr while a slow step runs."""
    return Console(stderr=True).status(message)
