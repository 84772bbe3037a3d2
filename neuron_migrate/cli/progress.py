"""A progress bar on stderr for long runs on a terminal (rich); silent everywhere else.

`bar(enabled)` returns an object with `start(total)`, `advance()` and `close()` that
`runner.run(progress=...)` calls; it draws only when stderr is a terminal and the run has at
least MIN_FILES files, and never for machine formats (the CLI passes enabled=False).
"""

from __future__ import annotations

import sys

MIN_FILES = 200


class Silent:
    def start(self, total: int) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class Bar(Silent):
    def __init__(self, stream) -> None:
        self.stream = stream
        self._progress = None
        self._task = None

    def start(self, total: int) -> None:
        if total < MIN_FILES:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        console = Console(file=self.stream, stderr=self.stream is sys.stderr)
        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task("checking", total=total)

    def advance(self, n: int = 1) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, n)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def bar(enabled: bool, stream=None):
    stream = stream if stream is not None else sys.stderr
    if enabled and hasattr(stream, "isatty") and stream.isatty():
        return Bar(stream)
    return Silent()
