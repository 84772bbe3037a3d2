"""A process pool over files that survives a dead worker.

LibCST's parser is native code: a file it cannot take may crash the process (SIGSEGV) instead
of raising. A plain ProcessPoolExecutor then breaks and every file's result is lost. Here each
worker notes the file it is checking in a small marker file before it starts; when the pool
breaks, the files named in the markers are the suspects. They are checked again one at a time,
each in a process of its own, and a file that kills that process too becomes one NM000 finding;
the other unfinished files go to a fresh pool.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from neuron_migrate.model import FileResult

# (path, display, relative) of one file, as api.run makes them
Item = tuple[str, str, str]
# what `work` returns for one file (api.run's workers: the result and their cache entries)
Outcome = Any

_marker: tuple[str, Callable[[Item], Outcome]] | None = None


def _init(folder: str, work: Callable[[Item], Outcome], initializer, initargs) -> None:
    global _marker
    _marker = (folder, work)
    initializer(*initargs)


def _run(index: int, item: Item) -> Outcome:
    assert _marker is not None
    folder, work = _marker
    # the marker says which file this process is on, should it die on it
    with open(os.path.join(folder, str(os.getpid())), "w", encoding="ascii") as handle:
        handle.write(str(index))
    return work(item)


def _suspects(folder: str) -> set[int]:
    found = set()
    for name in os.listdir(folder):
        try:
            with open(os.path.join(folder, name), encoding="ascii") as handle:
                found.add(int(handle.read() or -1))
        except (OSError, ValueError):
            continue
        os.unlink(os.path.join(folder, name))
    return found


def crashed(display: str, reason: str = "") -> FileResult:
    """The result of a file whose check killed the process that checked it."""
    from neuron_migrate.checkers.base import problem

    message = (
        "checking this file crashed the process that read it"
        + (f" ({reason})" if reason else "")
        + ": LibCST, the parser neuron-migrate reads code with, cannot take it; not checked"
    )
    return FileResult(display, findings=[problem(display, message)])


def _signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return ""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_pool(
    items: list[Item],
    jobs: int,
    work: Callable[[Item], Outcome],
    initializer,
    initargs: tuple,
    in_process: Callable[[Item], FileResult],
) -> Iterator[Outcome | FileResult]:
    """Yield one outcome per item, in the order they finish: what `work` returned (it runs in
    the workers after `initializer(*initargs)`), or a FileResult for a file checked here
    (`in_process`, when no pool can be started) or whose check killed its process."""
    # a forked worker flushes the buffers it inherits when it ends: empty them first
    sys.stdout.flush()
    sys.stderr.flush()
    folder = tempfile.mkdtemp(prefix="neuron-migrate-")
    try:
        pending = list(range(len(items)))
        while pending:
            done: set[int] = set()
            broken = False
            with ProcessPoolExecutor(
                max_workers=min(jobs, len(pending)),
                initializer=_init,
                initargs=(folder, work, initializer, initargs),
            ) as pool:
                futures = {pool.submit(_run, i, items[i]): i for i in pending}
                for future in as_completed(futures):
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    done.add(futures[future])
                    yield result
            left = [i for i in pending if i not in done]
            if not broken or not left:
                break
            suspects = [i for i in sorted(_suspects(folder)) if i in left]
            if not suspects and not done:
                # the pool broke before any file was reached: check the rest here
                for i in left:
                    yield in_process(items[i])
                break
            for i in suspects:
                yield _alone(items[i], work, initializer, initargs)
            pending = [i for i in left if i not in suspects]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _alone_child(send, item: Item, work, initializer, initargs) -> None:
    initializer(*initargs)
    send.send(work(item))
    send.close()


def _alone(item: Item, work, initializer, initargs) -> Outcome | FileResult:
    """Check one suspect file in a process of its own; its exit status says how it died."""
    context = multiprocessing.get_context()
    receive, send = context.Pipe(duplex=False)
    process = context.Process(
        target=_alone_child, args=(send, item, work, initializer, initargs), daemon=True
    )
    process.start()
    send.close()
    try:
        result = receive.recv()
    except EOFError:
        result = None
    finally:
        receive.close()
        process.join()
    if result is None:
        return crashed(item[1], _signal_name(process.exitcode))
    return result
