"""Work in a forked child beside the main process: an answer or None, never a different one."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from neuron_migrate import api
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.workspace import apart
from neuron_migrate.workspace.cache import FOLDER

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks only on Linux")


def test_the_child_computes_while_the_parent_works() -> None:
    done_here = []
    answer = apart.beside(lambda: ("child", os.getpid()), lambda: done_here.append(os.getpid()))
    assert answer is not None and answer[0] == "child"
    assert answer[1] != os.getpid() and done_here == [os.getpid()]


def test_a_child_that_fails_answers_none() -> None:
    def boom() -> None:
        raise ValueError("in the child")

    done_here = []
    assert apart.beside(boom, lambda: done_here.append(1)) is None
    assert done_here == [1]


def test_no_fork_beside_another_thread() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        done_here = []
        assert apart.beside(lambda: 1, lambda: done_here.append(1)) is None
        assert done_here == [1]
    finally:
        release.set()
        other.join()


def test_an_error_here_is_raised_after_the_child_is_reaped() -> None:
    def fail() -> None:
        raise RuntimeError("meanwhile")

    with pytest.raises(RuntimeError, match="meanwhile"):
        apart.beside(lambda: list(range(100_000)), fail)  # an answer bigger than a pipe holds
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left behind


LEGACY = "import torch_xla.core.xla_model as xm\nxm.mark_step()\n"


def _tree(root: Path) -> None:
    for i in range(api.PREFILTER_APART + 20):
        body = LEGACY if i % 4 == 0 else f"import os\nx = {i}\n"
        (root / f"m{i:03}.py").write_text(body)


def _summary(result: api.RunResult) -> list[tuple[str, str, int]]:
    return [(f.path, f.code, f.span.line) for f in result.findings]


def test_a_run_prefiltering_apart_finds_and_caches_what_a_serial_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    serial = api.run([tmp_path], Settings(root=tmp_path), Options(), jobs=1, cache=False)
    asked = []
    real = api.beside
    monkeypatch.setattr(api, "beside", lambda *a: asked.append(1) or real(*a))
    parallel = api.run([tmp_path], Settings(root=tmp_path), Options(), jobs=2)
    assert asked == [1]
    assert _summary(parallel) == _summary(serial) and serial.findings
    (cache_file,) = (tmp_path / FOLDER).glob("v2-*.json")
    entries = json.loads(cache_file.read_text())["entries"]
    assert len(entries) == api.PREFILTER_APART + 20
    # every file the child skipped is a hit on the next run: nothing is prefiltered again
    from neuron_migrate.checkers.python import PythonKind

    monkeypatch.setattr(PythonKind, "wants", lambda *a: pytest.fail("prefiltered again"))
    again = api.run([tmp_path], Settings(root=tmp_path), Options(), jobs=2)
    assert _summary(again) == _summary(serial)


def test_the_progress_bar_starts_after_the_child_and_counts_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bar draws from a thread, and no child is forked beside one: it starts once the files
    are settled, at the count they make, and ends at the total."""
    _tree(tmp_path)
    events: list[str] = []

    class Recorder:
        def __init__(self) -> None:
            self.total = self.done = 0

        def start(self, total: int) -> None:
            events.append("start")
            self.total = total

        def advance(self, n: int = 1) -> None:
            self.done += n

    real = api.beside
    monkeypatch.setattr(api, "beside", lambda *a: events.append("child") or real(*a))
    progress = Recorder()
    api.run([tmp_path], Settings(root=tmp_path), Options(), jobs=2, progress=progress)
    assert events == ["child", "start"]
    assert progress.total == progress.done == api.PREFILTER_APART + 20
