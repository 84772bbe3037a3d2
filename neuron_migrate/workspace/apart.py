"""Work done in a forked child while the main process does something else.

A cold run spends its first tenth of a second on two things that need not wait for each other:
the prefilter over every file (bytes searches, no LibCST) and importing LibCST with the rules'
code modules, which the main process must hold before it forks the workers that parse. On a
machine with a core to spare the prefilter runs in a child meanwhile (about 0.04 s of a
0.5 s cold run on pytorch-lightning). Where no child can be forked safely, the caller does the
work itself: `beside` only ever saves time, it never decides anything.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """A child can be forked here: Linux, whose fork every worker pool here relies on too, and
    no other thread (one holding a lock at the fork would leave the child waiting on it)."""
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


def beside(compute: Callable[[], T], meanwhile: Callable[[], object]) -> T | None:
    """Run `compute()` in a forked child while `meanwhile()` runs here, and return what the
    child computed; None when no child could be forked or it did not finish (the caller then
    computes it itself). An exception of `meanwhile` is raised once the child is reaped."""
    if not can_fork():
        meanwhile()
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running the parent's exit code
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    payload = b""
    status = -1
    try:
        meanwhile()
    finally:
        with os.fdopen(read_end, "rb") as incoming:
            payload = incoming.read()
        _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        return pickle.loads(payload)  # noqa: S301 - our own child's answer, through our pipe
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
