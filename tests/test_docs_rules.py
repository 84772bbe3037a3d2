"""Rules say what the TorchNeuron documentation says (issue 11, items 10 and 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_migrate.config.dependencies import pinned_packages
from neuron_migrate.config.settings import load_settings
from neuron_migrate.packs.loader import load_rules
from tests.conftest import codes, run_code
from tests.test_cli import invoke

RULES = {r.code: r for r in load_rules()}


def flat(text: str) -> str:
    """A rule text on one line (its TOML wraps lines anywhere)."""
    return " ".join(text.split())


DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/"
OPTIMUM = "https://github.com/huggingface/optimum-neuron/blob/main/optimum/neuron/"

TORCHAO_SCRIPT = """\
import torch
from torchao.float8 import convert_to_float8_training
from torchao.prototype.mx_formats import MXLinearConfig

model = torch.nn.Linear(64, 64)
convert_to_float8_training(model)
config = MXLinearConfig(block_size=32)
"""


# ---- NM807 / NM808: TorchAO Neuron --------------------------------------------------------------


@pytest.mark.parametrize("code", ["NM807", "NM808"])
def test_torchao_rules_are_warnings_that_name_torchao_neuron(code):
    rule = RULES[code]
    assert rule.severity.value == "warning"
    text = flat(rule.message + rule.why)
    for fact in ("torchao-neuron", "Trn3", "2.34", "2.14.3.1"):
        assert fact in text, (code, fact)
    assert rule.source.startswith(DOCS + "training/torchao-neuron/")


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "train.py").write_text(TORCHAO_SCRIPT)
    return tmp_path


def _reported(project: Path) -> set[str]:
    result = invoke("check", str(project), "--no-cache", "--format", "concise", cwd=project)
    return {code for code in ("NM807", "NM808") if code in result.output}


def test_torchao_is_reported_in_a_project_without_torchao_neuron(tmp_path):
    project = _project(tmp_path, {"requirements.txt": "torch==2.14.*\ntorchao==0.18\n"})
    assert _reported(project) == {"NM807", "NM808"}


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "torch==2.14.*\ntorchao-neuron==0.18.0+neuron.1  # MXFP8\n"},
        {
            "pyproject.toml": '[project]\nname = "t"\ndependencies = ["torch==2.14.*", '
            '"TorchAO_Neuron>=0.18"]\n'
        },
        {"setup.cfg": "[options]\ninstall_requires =\n    torch==2.14.*\n    torchao-neuron\n"},
    ],
    ids=["requirements", "pyproject", "setup.cfg"],
)
def test_torchao_is_not_reported_where_the_project_pins_torchao_neuron(tmp_path, files):
    project = _project(tmp_path, files)
    assert _reported(project) == set()
    assert "torchao-neuron" in load_settings(None, project).pinned


def test_pinned_packages_reads_the_project_above_a_subfolder(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "-r base.txt\ntorchao-neuron; python_version>='3.12'\n"
    )
    (tmp_path / "src").mkdir()
    assert "torchao-neuron" in pinned_packages(tmp_path / "src")
    assert "-r" not in " ".join(pinned_packages(tmp_path))


# ---- NM810: a workaround, said so --------------------------------------------------------------


def test_hf_async_load_is_a_hint_that_says_it_is_a_workaround():
    rule = RULES["NM810"]
    assert rule.severity.value == "info"
    assert "workaround" in rule.message and "workaround" in flat(rule.why)


# ---- NM101: the torchrun examples' device ---------------------------------------------------------


def test_device_follows_the_torchrun_examples():
    rule = RULES["NM101"]
    assert rule.source == DOCS + "torch/guides/torch-distributed.html"
    assert 'torch.device("neuron")' in rule.fix_text and "without the index" in flat(rule.fix_text)


# ---- NM701 / NM703: optimum-neuron of today ------------------------------------------------------


def test_neuron_trainer_is_standalone_and_older_classes_are_dated():
    rule = RULES["NM701"]
    assert "not a `transformers.Trainer` subclass" in flat(rule.why)
    for name in ("Seq2SeqNeuronTrainer", "NeuronORPOTrainer", "0.3.0 and earlier", "0.4.0"):
        assert name in flat(rule.why), name
    assert rule.source == OPTIMUM + "trainers/transformers.py"


NEURON_ONLY = (
    "use_autocast",
    "stochastic_rounding_enabled",
    "dataloader_prefetch_size",
    "enable_throughput_metrics",
    "enable_mfu_metrics",
    "enable_efficiency_metrics",
    "metrics_window_size",
    "skip_cache_push",
    "optimizer_use_master_weights",
    "optimizer_use_fp32_grad_acc",
    "optimizer_save_master_weights_in_ckpt",
    "recompute_causal_mask",
    "num_local_ranks_per_step",
)


@pytest.mark.parametrize("keyword", NEURON_ONLY)
def test_every_neuron_only_training_argument_is_reported(keyword):
    code = (
        "from optimum.neuron import NeuronTrainingArguments\n"
        f"args = NeuronTrainingArguments(output_dir='o', {keyword}=True)\n"
    )
    assert "NM703" in codes(code)
    fixed = run_code(code, fix=True, unsafe=True).fixed_source or code
    assert f"{keyword}=" in fixed, "a Neuron-only argument is never silently kept or dropped"


def test_neuron_only_arguments_cite_the_training_args_file():
    assert RULES["NM703"].source == OPTIMUM + "trainers/training_args.py"


# ---- the XLA inference path ---------------------------------------------------------------------


@pytest.mark.parametrize("code", ["NM601", "NM706", "NM708"])
def test_inference_rules_date_the_xla_path(code):
    why = flat(RULES[code].why)
    for fact in ("Neuron 2.30", "Neuron 2.32", "Neuron 2.34", "Trn2"):
        assert fact in why, (code, fact)


# ---- item 11: what the documentation names ------------------------------------------------------


def test_quantization_apis_are_reported():
    code = (
        "import torch\n"
        "from torch.ao.quantization import quantize_dynamic\n"
        "import torch.quantization as tq\n"
        "m = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)\n"
        "tq.prepare_qat(m)\n"
    )
    assert codes(code).count("NM811") >= 3


@pytest.mark.parametrize(
    "snippet",
    [
        "import torch\nz = torch.zeros(4, dtype=torch.complex64)\n",
        "import torch\nz = torch.view_as_complex(x)\n",
        "import torch\nz = torch.polar(r, theta)\n",
        "import torch\nz = x.cfloat()\n",
    ],
)
def test_complex_dtypes_and_ops_are_reported(snippet):
    assert "NM812" in codes(snippet)
    assert "NCC_EVRF004" in RULES["NM812"].message


def test_libtorch_neuronx_lite_pin_is_reported():
    found = codes("torch==2.14.*\nlibtorch-neuronx-lite==2.34.0\n", filename="requirements.txt")
    assert "NM906" in found
    assert "2.35" in RULES["NM906"].why or "2.35" in RULES["NM906"].message


def test_documented_fine_code_gets_nothing():
    code = """\
import torch

values, indices = torch.topk(torch.randn(8, 16), k=4, dim=-1)
out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
model = torch.compile(model, backend="neuron")
"""
    assert codes(code) == []


def test_bf16_variables_mention_stochastic_rounding():
    rule = RULES["NM504"]
    assert "stochastic rounding" in flat(rule.why)
    assert "NEURON_RT_STOCHASTIC_ROUNDING_EN" in rule.fix_text


@pytest.mark.parametrize("code", ["NM204", "NM205", "NM206"])
def test_compile_rules_recommend_fullgraph_and_say_failures_raise(code):
    text = flat(RULES[code].why + RULES[code].fix_text)
    assert "fullgraph=True" in text
    assert "TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION" in text


def test_backend_import_rule_names_the_autoload_switch():
    rule = RULES["NM302"]
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in flat(rule.why + rule.fix_text)
    assert "import torch_neuronx" in rule.fix_text
