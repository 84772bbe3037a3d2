"""What the project-file rules (pack `project`, NM901-NM905) know, with the sources.

The pack rules/project.toml names the same packages, variables and commands in its
`[[rule.match]]` tables (tests/test_project.py keeps the two in step).

Sources: TorchNeuron release notes
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/release-notes/components/torchneuron.html):
torch-neuronx 2.13.3.0.* goes with PyTorch 2.13, 2.14.3.0.* with PyTorch 2.14, both on Python
3.12, 3.13 and 3.14, on Trn2 and Trn3; "install torch-neuronx==2.14.* with PyTorch 2.14". The
legacy XLA-based torch-neuronx shares the package name and has lower versions (2.9.0.2.x, ...).
PyTorch/XLA training is unsupported from Neuron 2.30 on
(.../about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html).
"""

from __future__ import annotations

import re

# the native families, newest first: the first is the default target
FAMILIES = ("2.14", "2.13")
DEFAULT_FAMILY = FAMILIES[0]
# the first native torch-neuronx release; anything below is the XLA-based package
NATIVE_NEURONX_START = "2.13.3"

NEURONX = "torch-neuronx"
TORCH = "torch"
# XLA backend packages: replaced by one torch-neuronx pin (or removed when there is one)
XLA_BACKEND = ("torch-xla", "libneuronxla")
# legacy libraries whose code must be ported first (NM313, NM7xx): reported, never rewritten
LEGACY_LIBRARIES = {
    "neuronx-distributed": "DTensor tensor parallel, FSDP2 and `torch.distributed.pipelining`",
    "neuronx-distributed-training": "TorchTitan or your own loop with FSDP2 / DTensor",
    "optimum-neuron": "plain `transformers`, `trl`, `accelerate`, `peft` and `diffusers`",
}
# packages that make a file a Neuron project (for NM902 / NM903)
NEURON_PACKAGES = (NEURONX, *XLA_BACKEND, *LEGACY_LIBRARIES)

PYTHON_MIN = (3, 12)
PYTHON_MAX = (3, 14)

# launchers (NM904)
XLA_VARIABLE_RE = re.compile(
    r"^(?:XLA_[A-Z0-9_]+|PJRT_[A-Z0-9_]+|NEURON_EXTRACT_GRAPHS_ONLY|NEURON_PARALLEL_COMPILE[A-Z0-9_]*)$"
)
# variables whose removal changes the numerics: the fix is unsafe and the message says why
BF16_VARIABLES = ("XLA_USE_BF16", "XLA_DOWNCAST_BF16")
PRECOMPILE_COMMAND = "neuron_parallel_compile"
# options or variables that show a script starts several XLA processes itself
MULTIPROCESS_SIGNS_RE = re.compile(
    r"--nprocs?\b|--num[-_]cores\b|--num[-_]devices\b|--world[-_]size\b|"
    r"\bNEURON_RT_NUM_CORES=|\bNEURON_NUM_DEVICES=|\bxla_dist\b|\bxla_multiprocessing\b"
)

# instance types (NM905): Trn1, Trn1n, Inf1, Inf2; SageMaker spells them ml.trn1.2xlarge
INSTANCE_RE = re.compile(r"(?<![\w.-])(?:ml\.)?(?:trn1n?|inf1|inf2)\.(?:\d*xlarge|metal)\b")
SUPPORTED_INSTANCES = "trn2.3xlarge, trn2.48xlarge or a Trn3 instance"

# ---- the opt-in cuda pack (NMC111 cuda-dependency, NMC112 cuda-launcher) ----
# A CUDA build's local version (`torch==2.1.0+cu121`): PyTorch's wheel index names CUDA builds so
# (https://pytorch.org/get-started/previous-versions/); TorchNeuron pins plain `torch==2.14.*`.
CUDA_LOCAL_VERSION_RE = re.compile(r"(?<=[0-9*])\+cu[0-9]{2,3}\b")
# `--index-url https://download.pytorch.org/whl/cu121` (or `--extra-index-url`, `-i`)
CUDA_INDEX_RE = re.compile(
    r"(?P<option>--(?:extra-)?index-url|-i)(?:=|[ \t]+)(?P<url>\S*/(?:whl/)?cu[0-9]{2,3}/?)(?=\s|$)"
)
# NVIDIA's CUDA runtime wheels (nvidia-cudnn-cu12, nvidia-nccl-cu12, ...): nothing uses them on Neuron
NVIDIA_PACKAGE_RE = re.compile(r"^nvidia-[a-z0-9-]+$")
# packages that ship CUDA kernels only: the code that imports them is ported first (NMC120)
CUDA_ONLY_PACKAGES = {
    "flash-attn": "`torch.nn.functional.scaled_dot_product_attention`",
    "xformers": "`torch.nn.functional.scaled_dot_product_attention`",
    "bitsandbytes": "`torch.optim` and bfloat16 weights",
    "apex": "`torch.optim`, `torch.nn` and `torch.autocast`",
    "triton": "PyTorch operators or an NKI kernel",
    "pynvml": "`torch.accelerator`",
    "nvidia-ml-py": "`torch.accelerator`",
}
CUPY_RE = re.compile(r"^cupy(-cuda[0-9a-z]+)?$")
# base images with the CUDA toolkit (Docker `FROM`)
CUDA_IMAGE_RE = re.compile(
    r"^(?:docker\.io/)?(?:nvidia/cuda|nvcr\.io/nvidia/[a-z0-9_.-]+)(?::|@|$)"
)
# torchrun's `--nproc_per_node=gpu`: one process per GPU
NPROC_GPU_RE = re.compile(r"--nproc[_-]per[_-]node(?:=|[ \t]+)gpu\b")
CUDA_VISIBLE = "CUDA_VISIBLE_DEVICES"
NEURON_VISIBLE = "NEURON_RT_VISIBLE_CORES"
