"""End to end: migrate the distributed example for the CPU and run it under torchrun with two
processes (real torch; skipped when torch is not installed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e import NEEDS_TORCH, migrate_for_cpu, torchrun

pytestmark = [pytest.mark.slow, NEEDS_TORCH]  # torchrun with two processes


def test_distributed_example_runs_under_torchrun(tmp_path: Path):
    import torch

    work = tmp_path / "distributed"
    shutil.copytree(REPO / "examples" / "distributed", work)
    fix = migrate_for_cpu(work)
    assert fix.returncode in (0, 1), fix.stderr
    migrated = (work / "train.py").read_text()
    assert "torch_xla" not in migrated.split('"""', 2)[-1].replace(
        "# runtime knobs for the XLA path", ""
    )
    assert 'dist.init_process_group("gloo")' in migrated
    checkpoint = tmp_path / "ckpt.pt"
    run = torchrun("train.py", "--epochs", "1", "--out", str(checkpoint), nproc=2, cwd=work)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    assert "done: rank=0 world=2" in run.stdout
    assert "done: rank=1 world=2" in run.stdout
    assert checkpoint.is_file()
    state = torch.load(checkpoint, map_location="cpu")
    assert set(state) == {"0.weight", "0.bias", "2.weight", "2.bias"}
