"""End to end: the NeuronX Distributed scripts of tests/nxd/legacy (written in NxD's style, never
run as they are) are migrated with `--fix --unsafe-fixes --target-device cpu` and run under
torchrun with gloo. Tensor parallelism over two processes gives the loss of one process, and so
does data parallelism over two; the migrated tree imports nothing from NxD or torch_xla; the
checkpoint round trip replays the same losses."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e import NEEDS_TORCH, migrate_for_cpu, torchrun

pytestmark = NEEDS_TORCH

LEGACY = REPO / "tests" / "nxd" / "legacy"
SCRIPTS = ["gpt_tp", "bert_hf", "gqa_block", "sp_block", "train_ckpt", "lm_resume"]
# (processes, tensor-parallel size): one process, TP=2 over two, DP=2 x TP=1
LAYOUTS = [(1, 1), (2, 2), (2, 1)]
LEGACY_PACKAGES = ("neuronx_distributed", "torch_xla")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("nxd")
    for script in SCRIPTS:
        shutil.copy(LEGACY / f"{script}.py", work)
    fix = migrate_for_cpu(work)
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
    with_folder = script in ("train_ckpt", "lm_resume")
    args = [str(tmp / f"ckpt-{processes}-{tp}")] if with_folder else []
    run = torchrun(f"{script}.py", *args, nproc=processes, cwd=folder, env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    losses = {}
    for line in run.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("LOSS", "RESUMED", "DIRECT"):
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
    migrate_for_cpu(copy)
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
    if script in ("train_ckpt", "lm_resume"):
        # the model and optimizer loaded from the checkpoint replay the losses after it
        for key, value in reference.items():
            if key.startswith("RESUMED"):
                assert value == pytest.approx(reference[f"LOSS {key.split()[1]}"], rel=1e-6)


RESHARD = """\
import os, sys, torch, torch.distributed as dist
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
import parallel_mesh

dist.init_process_group("gloo")
parallel_mesh.init_mesh("cpu", tensor_parallel_size=dist.get_world_size())
torch.manual_seed(0 if sys.argv[2] == "save" else 1)
tp = parallel_mesh.tp_mesh()
model = torch.nn.Sequential(
    parallelize_module(torch.nn.Linear(8, 16), tp, ColwiseParallel()),
    parallelize_module(torch.nn.Linear(16, 4), tp, RowwiseParallel()),
)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
model(torch.randn(3, 8)).sum().backward()
optimizer.step()
if sys.argv[2] == "save":
    parallel_mesh.save_checkpoint(sys.argv[1], "t", model=model, optimizer=optimizer, user_content=7)
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 3}
    parallel_mesh.save(state, os.path.join(sys.argv[1], "dict"))
elif sys.argv[2] == "load":
    assert parallel_mesh.load_checkpoint(sys.argv[1], model=model, optimizer=optimizer) == 7
else:  # parallel_layers.checkpointing's state-dict checkpoint, written by "save" above
    state = parallel_mesh.load(os.path.join(sys.argv[1], "dict"), model)
    assert state["step"] == 3 and "model" not in state
    optimizer.load_state_dict(state["optimizer"])
    optimizer.step()  # the optimizer state came back as DTensors of this run's mesh
full = {k: getattr(v, "full_tensor", lambda: v)() for k, v in model.state_dict().items()}
if dist.get_rank() == 0:
    torch.save(full, os.path.join(sys.argv[1], sys.argv[2] + ".pt"))
dist.barrier()
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_checkpoint_saved_at_tp2_loads_at_tp1(tmp_path: Path):
    """The companion's DCP checkpoints reshard: written by two TP ranks, read by one (NxD's
    trainer checkpoints and parallel_layers.checkpointing's state-dict files)."""
    import torch

    shutil.copy(REPO / "rules" / "xla" / "nxd" / "parallel_mesh.py", tmp_path)
    (tmp_path / "reshard.py").write_text(RESHARD)
    for processes, mode in ((2, "save"), (1, "load"), (1, "load-dict")):
        run = torchrun("reshard.py", str(tmp_path / "ckpt"), mode, nproc=processes, cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-4000:]
    saved = torch.load(tmp_path / "ckpt" / "save.pt")
    loaded = torch.load(tmp_path / "ckpt" / "load.pt")
    assert saved.keys() == loaded.keys()
    assert all(torch.equal(saved[k], loaded[k]) for k in saved)
    # parallel_mesh.load of a state dict saved at TP=2: the same weights, then one optimizer
    # step (Adam's first step moves each weight by about lr, so they differ from the saved ones)
    stepped = torch.load(tmp_path / "ckpt" / "load-dict.pt")
    assert stepped.keys() == saved.keys()
    assert all(not torch.equal(saved[k], stepped[k]) for k in saved)
    assert all(torch.allclose(saved[k], stepped[k], atol=0.11) for k in saved)


FSDP_TP = """\
import os, sys, torch, torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
import parallel_mesh

dist.init_process_group("gloo")
parallel_mesh.init_mesh("cpu", tensor_parallel_size=int(sys.argv[3]))
torch.manual_seed(0)
tp = parallel_mesh.tp_mesh()
model = torch.nn.Sequential(
    parallelize_module(torch.nn.Linear(8, 16), tp, ColwiseParallel()),
    torch.nn.ReLU(),
    parallelize_module(torch.nn.Linear(16, 4), tp, RowwiseParallel()),
    torch.nn.Linear(4, 4),
)
fully_shard(model, mesh=parallel_mesh.dp_mesh())
optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
model(torch.randn(3, 8)).sum().backward()
optimizer.step()
folder = sys.argv[1]
if sys.argv[2] == "save":
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 1}
    parallel_mesh.save(state, os.path.join(folder, "dict"))
else:
    state = parallel_mesh.load(os.path.join(folder, "dict"), model)
    optimizer.load_state_dict(state["optimizer"])
full = {k: v.full_tensor() for k, v in model.state_dict().items()}
for i, s in optimizer.state_dict()["state"].items():
    full[f"exp_avg {i}"] = s["exp_avg"].full_tensor()
if dist.get_rank() == 0:
    torch.save(full, os.path.join(folder, sys.argv[2] + ".pt"))
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_state_dict_of_fsdp2_over_tp_reshards(tmp_path: Path):
    """parallel_mesh.save / load (NxD's checkpointing.save / load) of an FSDP2 + TP model and
    its AdamW state: saved on dp=2 x tp=2, loaded on dp=2 x tp=1, the same weights and moments
    (FSDP2's "dp" placement over a column-parallel layer depends on the tp size)."""
    import torch

    shutil.copy(REPO / "rules" / "xla" / "nxd" / "parallel_mesh.py", tmp_path)
    (tmp_path / "fsdp_tp.py").write_text(FSDP_TP)
    for processes, mode, tp in ((4, "save", "2"), (2, "load", "1")):
        run = torchrun("fsdp_tp.py", str(tmp_path), mode, tp, nproc=processes, cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-4000:]
    saved = torch.load(tmp_path / "save.pt")
    loaded = torch.load(tmp_path / "load.pt")
    assert saved.keys() == loaded.keys() and any(k.startswith("exp_avg") for k in saved)
    assert all(torch.equal(saved[k], loaded[k]) for k in saved)


PADDING = """\
import sys, torch, torch.distributed as dist
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import RowwiseParallel, parallelize_module
import parallel_mesh

dist.init_process_group("gloo")
parallel_mesh.init_mesh("cpu", tensor_parallel_size=dist.get_world_size())
embedding = torch.nn.Embedding(8, 4, padding_idx=5)
embedding = parallelize_module(embedding, parallel_mesh.tp_mesh(), RowwiseParallel(input_layouts=Replicate()))
embedding(torch.tensor([[1, 5, 6, 2, 5]])).sum().backward()
grad = embedding.weight.grad.full_tensor()
assert grad[5].abs().sum() == 0 and grad[1].abs().sum() > 0, grad
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_padding_row_gets_no_gradient_on_a_sharded_vocabulary(tmp_path: Path):
    """What NM314's ParallelEmbedding(padding_idx=p) fix relies on: with the vocabulary split over
    two TP ranks, the padding row (held by the second) gets no gradient, as in NxD."""
    shutil.copy(REPO / "rules" / "xla" / "nxd" / "parallel_mesh.py", tmp_path)
    (tmp_path / "padding.py").write_text(PADDING)
    run = torchrun("padding.py", nproc=2, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
