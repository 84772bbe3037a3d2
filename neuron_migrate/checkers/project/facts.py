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
# end of support (NM906): Neuron 2.34 is the last release with it; current users move to
# torch-neuronx (.../about-neuron/announcements/neuron2.x/announce-eos-libtorch-neuronx-lite.html)
END_OF_SUPPORT = {
    "libtorch-neuronx-lite": "Neuron 2.34 is its last release (no release from Neuron 2.35)",
}
# packages that make a file a Neuron project (for NM902 / NM903)
NEURON_PACKAGES = (NEURONX, *XLA_BACKEND, *LEGACY_LIBRARIES, *END_OF_SUPPORT)

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
