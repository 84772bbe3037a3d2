"""The command line: parses options, calls the library API, prints, sets the exit code."""

from __future__ import annotations

import gc
import os
import sys
from contextlib import suppress

from neuron_migrate.cli.app import main

__all__ = ["GC_THRESHOLDS", "entry", "main"]

# a run allocates millions of short-lived nodes and keeps few: Python's default collector
# scans after every 700 allocations and rescans the survivors (the rule sets, the tree being
# read); collecting a hundred times less often costs 5-10% less CPU, and the few cycles a file
# leaves behind are still freed at each collection
GC_THRESHOLDS = (100_000, 50, 100)


def entry() -> None:
    """The installed command: `main`, then a hard exit once the output is flushed.

    A run leaves hundreds of thousands of objects (trees, rule sets, findings); the interpreter's
    teardown frees them one by one, about 0.04 s on a real repository, longer than a cached
    re-run's own work. Every file has been written and closed by then, and the process pool
    shut down, so nothing is lost by skipping it (mypy ends the same way)."""
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_status(exc.code)
    for stream in (sys.stdout, sys.stderr):
        # a closed pipe (`| head`): nothing more can be said on it
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _exit_status(code: object) -> int:
    """What `sys.exit(code)` makes the process's exit status (a message is printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
