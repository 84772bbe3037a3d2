"""End to end: the NeuronX Distributed scripts of tests/nxd/legacy (written in NxD's style, never
run as they are) are migrated with `--fix --unsafe-fixes --target-device cpu` and run under
torchrun with gloo. Tensor parallelism over two processes gives the loss of one process, and so
does data parallelism over two; the migrated tree imports nothing from NxD or torch_xla; the
checkpoint round trip replays the same losses."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("torch")

LEGACY = REPO / "tests" / "nxd" / "legacy"
SCRIPTS = ["gpt_tp", "bert_hf", "gqa_block", "sp_block", "train_ckpt"]
# (processes, tensor-parallel size): one process, TP=2 over two, DP=2 x TP=1
LAYOUTS = [(1, 1), (2, 2), (2, 1)]
LEGACY_PACKAGES = ("neuronx_distributed", "torch_xla")


def _migrate(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", "--fix", "--unsafe-fixes"]
        + ["--target-device", "cpu", "--no-cache", str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("nxd")
    for script in SCRIPTS:
        shutil.copy(LEGACY / f"{script}.py", work)
    fix = _migrate(work)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert "Created" in fix.stderr and "parallel_mesh.py" in fix.stderr
    return work


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


def _losses(folder: Path, script: str, processes: int, tp: int, tmp: Path) -> dict[str, float]:
    env = {**os.environ, "TP": str(tp), "OMP_NUM_THREADS": "1"}
    args = [str(tmp / f"ckpt-{processes}-{tp}")] if script == "train_ckpt" else []
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone"]
        + [f"--nproc_per_node={processes}", f"{script}.py", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    losses = {}
    for line in run.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("LOSS", "RESUMED"):
            losses[f"{parts[0]} {parts[1]}"] = float(parts[2])
    assert losses, run.stdout
    return losses


@pytest.mark.slow
def test_migrated_tree_imports_no_legacy_package(migrated: Path):
    for path in sorted(migrated.glob("*.py")):
        legacy = {m for m in _imported_modules(path) if m.split(".")[0] in LEGACY_PACKAGES}
        assert not legacy, f"{path.name} still imports {legacy}"
        assert "neuron_migrate" not in path.read_text()
    assert "parallelize_module" in (migrated / "gpt_tp.py").read_text()
    assert "fully_shard" in (migrated / "gpt_tp.py").read_text()


@pytest.mark.slow
def test_second_fix_changes_nothing(migrated: Path, tmp_path: Path):
    copy = tmp_path / "again"
    shutil.copytree(migrated, copy)
    mesh = copy / "parallel_mesh.py"
    mesh.write_text(mesh.read_text() + "\n# edited by the user\n")
    before = {p.name: p.read_text() for p in copy.glob("*.py")}
    _migrate(copy)
    assert {p.name: p.read_text() for p in copy.glob("*.py")} == before


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_tensor_and_data_parallel_give_the_single_process_loss(
    migrated: Path, script: str, tmp_path: Path
):
    if script == "bert_hf":
        pytest.importorskip("transformers")
    runs = {layout: _losses(migrated, script, *layout, tmp_path) for layout in LAYOUTS}
    reference = runs[(1, 1)]
    for layout, losses in runs.items():
        assert losses.keys() == reference.keys(), layout
        for step, value in losses.items():
            assert value == pytest.approx(reference[step], rel=1e-4), (layout, step)
    if script == "train_ckpt":
        # the model and optimizer loaded from the checkpoint replay the losses after it
        for key, value in reference.items():
            if key.startswith("RESUMED"):
                assert value == pytest.approx(reference[f"LOSS {key.split()[1]}"], rel=1e-6)
