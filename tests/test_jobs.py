"""--jobs: a process pool over files gives exactly the output of one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from neuron_migrate.api import POOL_THRESHOLD


def _tree(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / f"pkg{i % 7}"
        folder.mkdir(exist_ok=True)
        body = "import torch_xla.core.xla_model as xm\n" + "xm.mark_step()\n" * (i % 3 + 1)
        if i % 5 == 0:
            body = "import torch\nprint(torch.ones(1))\n"  # clean file
        if i % 11 == 0:
            body = "import torch_xla\ndef broken(:\n"  # syntax error
        (folder / f"m{i:03}.py").write_text(body)


def _check(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", "--no-cache", *args, str(root)],
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_pool_output_is_identical_to_one_process(tmp_path):
    _tree(tmp_path, POOL_THRESHOLD + 40)
    serial = _check(tmp_path, "--jobs", "1")
    pooled = _check(tmp_path, "--jobs", "2")
    assert serial.returncode == pooled.returncode == 1
    assert serial.stdout == pooled.stdout
    assert serial.stdout.count("NM000") == len(range(0, POOL_THRESHOLD + 40, 11))
    for fmt in ("json", "sarif", "junit"):
        assert (
            _check(tmp_path, "--jobs", "1", "--format", fmt).stdout
            == _check(tmp_path, "--jobs", "2", "--format", fmt).stdout
        )


@pytest.mark.slow
def test_pool_fix_matches_serial_fix(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _tree(a, POOL_THRESHOLD + 10)
    _tree(b, POOL_THRESHOLD + 10)
    _check(a, "--fix", "--jobs", "1")
    _check(b, "--fix", "--jobs", "2")
    for path in sorted(a.rglob("*.py")):
        assert path.read_bytes() == (b / path.relative_to(a)).read_bytes()
