"""GPU-era project files, for the opt-in cuda pack (NMC111 cuda-dependency, NMC112
cuda-launcher): CUDA builds of torch (`+cu121`), PyTorch's CUDA wheel indexes, NVIDIA runtime
wheels and CUDA-only packages in requirements, pyproject.toml, setup.cfg, setup.py and `pip
install` lines; CUDA base images, `torchrun --nproc_per_node=gpu` and `CUDA_VISIBLE_DEVICES` in
launchers and Dockerfiles.

Line by line and format-blind on purpose: these spellings look the same in every format. Each
hit carries a `TextEdit` (or none: manual), applied by `apply`."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from neuron_migrate.checkers.project import deps, facts
from neuron_migrate.checkers.project.core import Hit, Lines, TextEdit, apply_edits
from neuron_migrate.model import Safety

DEPENDENCY, LAUNCHER = "NMC111", "NMC112"
CODES = (DEPENDENCY, LAUNCHER)
TRIGGER = re.compile(rb"cu[0-9]{2,3}|nvidia|CUDA_|gpu|flash|xformers|bitsandbytes|apex|triton|cupy")
# formats whose lines can hold requirements, and formats that are launchers
_REQUIREMENT_FORMATS = {"requirements", "pyproject", "setupcfg", "setuppy", "shell", "dockerfile"}
_LAUNCHER_FORMATS = {"shell", "dockerfile"}
_QUOTED = re.compile(r"[\"']([A-Za-z0-9][A-Za-z0-9._-]*)")
_WORD = re.compile(r"(?<![\w./=-])([A-Za-z0-9][A-Za-z0-9._-]*)")
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE)


def _hit(code, lines, number, start, end, message, safety=None, new=None) -> Hit:
    edit = None
    if new is not None:
        edit = TextEdit(lines.offset(number, start + 1), lines.offset(number, end + 1), new)
    return Hit(code, number, start + 1, end + 1, message, safety if edit else None, new, edit)


def _package_message(name: str) -> tuple[str, bool] | None:
    """(message, removable) for a package name that only makes sense with NVIDIA GPUs."""
    name = canonicalize_name(name)
    if facts.NVIDIA_PACKAGE_RE.match(name):
        return f"`{name}` is an NVIDIA CUDA runtime wheel; nothing uses it on Neuron: drop it", True
    if name in facts.CUDA_ONLY_PACKAGES:
        port = facts.CUDA_ONLY_PACKAGES[name]
        return (
            f"`{name}` ships CUDA kernels only: port its uses to {port} (NMC120), then drop it",
            False,
        )
    if facts.CUPY_RE.match(name):
        return f"`{name}` needs an NVIDIA GPU: port its uses to torch tensors, then drop it", False
    return None


def _requirement_line(lines: Lines, number: int, line: str, hits: list[Hit]) -> None:
    head = re.split(r"\s|;|\[|[<>=!~]", line.strip(), maxsplit=1)[0]
    if not head or head.startswith("-") or deps.parse(head) is None:
        return
    found = _package_message(head)
    if found is None:
        return
    message, removable = found
    start = len(line) - len(line.lstrip())
    hit = _hit(DEPENDENCY, lines, number, start, start + len(head), message)
    if removable:
        hit.edit, hit.safety, hit.replacement = lines.whole_line(number), Safety.SAFE, ""
    hits.append(hit)


def _packages_in(line: str, fmt: str) -> list[re.Match]:
    if fmt in _LAUNCHER_FORMATS:
        return list(_WORD.finditer(line)) if re.search(r"\bpip3?\b|\buv\b", line) else []
    return list(_QUOTED.finditer(line))


def analyze(text: str, fmt: str) -> list[Hit]:
    lines = Lines(text)
    hits: list[Hit] = []
    for number in range(1, len(lines) + 1):
        line = lines.content(number)
        if line.lstrip().startswith("#"):
            continue
        if fmt in _REQUIREMENT_FORMATS:
            for found in facts.CUDA_LOCAL_VERSION_RE.finditer(line):
                hits.append(
                    _hit(
                        DEPENDENCY,
                        lines,
                        number,
                        found.start(),
                        found.end(),
                        f"`{found.group(0)}` pins a CUDA build of PyTorch; TorchNeuron uses the "
                        "plain release: drop the local version",
                        Safety.SAFE,
                        "",
                    )
                )
            for found in facts.CUDA_INDEX_RE.finditer(line):
                start, end = found.start(), found.end()
                whole = line.strip() == found.group(0)
                while not whole and start > 0 and line[start - 1] in " \t":
                    start -= 1
                hit = _hit(
                    DEPENDENCY,
                    lines,
                    number,
                    found.start(),
                    found.end(),
                    f"`{found.group('url')}` is PyTorch's CUDA wheel index; TorchNeuron installs "
                    "torch from PyPI: drop the option",
                    Safety.UNSAFE,
                    "",
                )
                if whole:
                    hit.edit = lines.whole_line(number)
                else:
                    hit.edit = TextEdit(lines.offset(number, start + 1), hit.edit.end, "")
                hits.append(hit)
            if fmt == "requirements":
                _requirement_line(lines, number, line, hits)
            else:
                for found in _packages_in(line, fmt):
                    message = _package_message(found.group(1))
                    if message is not None:
                        start, end = found.span(1)
                        hits.append(_hit(DEPENDENCY, lines, number, start, end, message[0]))
        if fmt not in _LAUNCHER_FORMATS:
            continue
        image = _FROM.match(line) if fmt == "dockerfile" else None
        if image and facts.CUDA_IMAGE_RE.match(image.group(1)):
            start, end = image.span(1)
            hits.append(
                _hit(
                    LAUNCHER,
                    lines,
                    number,
                    start,
                    end,
                    f"`{image.group(1)}` is a CUDA base image; build on a Neuron deep learning "
                    "container or an Ubuntu image with the Neuron driver and runtime",
                )
            )
        for found in facts.NPROC_GPU_RE.finditer(line):
            hits.append(
                _hit(
                    LAUNCHER,
                    lines,
                    number,
                    found.start(),
                    found.end(),
                    "`--nproc_per_node=gpu` starts one process per GPU; on Trainium give the "
                    "number of NeuronCores (`--nproc_per_node=N`)",
                )
            )
        for found in re.finditer(rf"\b{facts.CUDA_VISIBLE}\b", line):
            hits.append(
                _hit(
                    LAUNCHER,
                    lines,
                    number,
                    found.start(),
                    found.end(),
                    f"`{facts.CUDA_VISIBLE}` picks GPUs; NeuronCores are picked with "
                    f"`{facts.NEURON_VISIBLE}` (core indices, not GPU indices)",
                    Safety.UNSAFE,
                    facts.NEURON_VISIBLE,
                )
            )
    return hits


def apply(text: str, hits: list[Hit]) -> str:
    return apply_edits(text, [h.edit for h in hits if isinstance(h.edit, TextEdit)])
