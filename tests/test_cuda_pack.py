"""The opt-in `cuda` pack (NMC1xx): how it is selected, that it finds every CUDA-only line of
a GPU-era script and nothing else, and that the scripts it migrates run on a CPU."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.cli.app import main as cli
from tests.conftest import REPO, codes
from tests.e2e import migrate_for_cpu, torchrun

SCRIPTS = REPO / "tests" / "cuda"
GPU_SNIPPET = """
import torch

x = torch.zeros(3).cuda()
torch.cuda.synchronize()
"""


def _nmc(found: list[str]) -> list[str]:
    return [c for c in found if c.startswith("NMC")]


# ---- selection ---------------------------------------------------------------------------------


def test_off_by_default_and_not_selected_by_nm():
    assert _nmc(codes(GPU_SNIPPET)) == []
    assert _nmc(codes(GPU_SNIPPET, select=("NM",))) == []
    assert _nmc(codes(GPU_SNIPPET, select=("NM1",))) == []


def test_selected_by_its_prefix_and_by_all():
    assert _nmc(codes(GPU_SNIPPET, select=("NMC",))) == ["NMC102", "NMC103"]
    assert _nmc(codes(GPU_SNIPPET, select=("NMC1",))) == ["NMC102", "NMC103"]
    assert _nmc(codes(GPU_SNIPPET, select=("cuda-method",))) == ["NMC102"]
    # ruff's ALL: every rule, opt-in packs included
    assert _nmc(codes(GPU_SNIPPET, select=("ALL",))) == ["NMC102", "NMC103"]


def test_target_cuda_leaves_cuda_code_alone():
    assert _nmc(codes(GPU_SNIPPET, select=("ALL",), target="cuda")) == []
    assert _nmc(codes(GPU_SNIPPET, select=("ALL",), target="cpu")) == ["NMC102", "NMC103"]


def test_project_files_only_when_selected():
    pins = "torch==2.1.2+cu121\nnvidia-nccl-cu12==2.18.1\n"
    assert _nmc(codes(pins, filename="requirements.txt")) == []
    found = codes(pins, filename="requirements.txt", select=("NMC",))
    assert found == ["NMC111", "NMC111"]
    launcher = "export CUDA_VISIBLE_DEVICES=0\ntorchrun --nproc_per_node=gpu train.py\n"
    assert _nmc(codes(launcher, filename="run.sh")) == []
    assert codes(launcher, filename="run.sh", select=("NMC",)) == ["NMC112", "NMC112"]


def _check(*args: str) -> str:
    return CliRunner().invoke(cli, ["check", "--no-cache", *args]).output


def test_extend_select_on_the_command_line_and_in_pyproject(tmp_path: Path):
    (tmp_path / "train.py").write_text(GPU_SNIPPET.lstrip())
    assert "NMC" not in _check(str(tmp_path))
    assert "NMC" not in _check("--select", "NM", str(tmp_path))
    out = _check("--extend-select", "NMC", str(tmp_path))
    assert "NMC102" in out and "NMC103" in out
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrate]\nextend-select = ["NMC"]\n')
    out = _check(str(tmp_path))
    assert "NMC102" in out and "NMC103" in out
    assert "NMC" not in _check("--target-device", "cuda", str(tmp_path))


# ---- every CUDA-only line, and nothing else ------------------------------------------------------


def test_every_marked_line_and_no_other_gets_a_finding():
    text = (SCRIPTS / "heldout_style.py").read_text()
    marked = {i for i, line in enumerate(text.splitlines(), 1) if line.endswith("# CUDA")}
    from tests.conftest import run_code

    result = run_code(text, dedent=False, select=("ALL",))
    found = {f.span.line for f in result.findings}
    assert sorted(found - marked) == [], "findings on fine lines"
    assert sorted(marked - found) == [], "CUDA-only lines without a finding"


def test_fine_code_is_not_reported():
    fine = """
    import torch
    import torch.nn.functional as F

    device = torch.device("neuron")
    loader = torch.utils.data.DataLoader(data, pin_memory=True)
    x = x.to(device, non_blocking=True)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    values, idx = torch.topk(scores, 2, dim=-1)
    names.sort()
    """
    assert _nmc(codes(fine, select=("ALL",))) == []


# ---- migrated for the CPU, and run -----------------------------------------------------------------


def _migrate(tmp_path: Path, *names: str) -> Path:
    work = tmp_path / "gpu"
    work.mkdir()
    for name in names:
        shutil.copy(SCRIPTS / name, work / name)
    fix = migrate_for_cpu(work, "--extend-select", "NMC")
    assert fix.returncode in (0, 1), fix.stderr
    for name in names:
        assert "cuda" not in _code_lines(work / name), (work / name).read_text()
    return work


def _code_lines(path: Path) -> str:
    """The file without its comments and docstring (they may still say "GPU" or "cuda")."""
    body = path.read_text().split('"""', 2)[-1]
    return "\n".join(line.split("#", 1)[0] for line in body.splitlines())


def _run(*command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_single_device_amp_script_trains_on_cpu(tmp_path: Path):
    pytest.importorskip("torch")
    work = _migrate(tmp_path, "single_gpu_amp.py")
    done = _run(sys.executable, "single_gpu_amp.py", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "last loss" in done.stdout


@pytest.mark.slow
def test_ddp_script_trains_under_torchrun_with_identical_parameters(tmp_path: Path):
    torch = pytest.importorskip("torch")
    work = _migrate(tmp_path, "ddp_nccl.py")
    out = tmp_path / "out"
    out.mkdir()
    done = torchrun("ddp_nccl.py", str(out), nproc=2, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = [torch.load(out / f"rank{r}.pt") for r in (0, 1)]
    for name, value in ranks[0]["params"].items():
        assert torch.equal(value, ranks[1]["params"][name]), name
    for rank in ranks:
        assert rank["losses"][-1] < rank["losses"][0]


@pytest.mark.slow
def test_hugging_face_fine_tune_with_flash_attention_2_trains_on_cpu(tmp_path: Path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    work = _migrate(tmp_path, "hf_finetune.py")
    assert 'attn_implementation="sdpa"' in (work / "hf_finetune.py").read_text()
    done = _run(sys.executable, "hf_finetune.py", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
