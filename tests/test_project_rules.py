"""Project rules as packs write them: data cases (a TOML file), code modules beside them, and
the checks the loader and the dispatcher make. The packs here are made in a temporary folder,
so these tests name no built-in rule: a data pack is loaded as a user's pack, a pack with code
as a built-in one would be (a user's pack never runs code)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from neuron_migrate.api import check_text, enabled_rules
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import PackError, load_pack, load_rules

PACK = """\
[pack]
name = "gpu"

[lists]
cuda-wheels = ["nvidia-*"]
"""

DATA_RULE = """\
code = "NM991"
name = "cuda-parts"
severity = "warning"
message = "`{name}` is CUDA"
why = "CUDA is not on Trainium."
fix = "By hand."
source = "https://example.com"
ok = [{ file = "requirements.txt", code = "numpy\\n" }]

[[match]]
kind = "project"
reads = "pin"
case = "cuda-wheel"
names = ["@cuda-wheels"]
message = "`{pin}` is a CUDA wheel"

[[match]]
kind = "project"
reads = "option"
names = ["--extra-index-url", "-f"]
message = "`{name} {value}` may be a CUDA wheel index"

[[match]]
kind = "project"
reads = "image"
names = ["nvidia/cuda"]
message = "`{name}` is a CUDA base image"

[[match]]
kind = "project"
reads = "env"
names = ["CUDA_*"]
message = "`{name}` steers CUDA"

[[match]]
kind = "project"
reads = "command"
names = ["nvidia-smi"]
message = "`{command}` asks the GPU driver"

[[match]]
kind = "project"
reads = "line"
names = ['\\bsm_[0-9]{2}\\b']
message = "`{name}` is a GPU architecture"
"""

CODE_RULE = """\
code = "NM992"
name = "cuda-local-version"
severity = "error"
message = "`{pin}` is a CUDA build"
why = "A +cuXXX build is for GPUs."
fix = "Drop the local version."
source = "https://example.com"
ok = [{ file = "requirements.txt", code = "torch==2.14.*\\n" }]

[[match]]
kind = "project"
reads = "pin"
case = "local-build"
names = ["torch"]
safety = "safe"
message = "`{pin}` is the CUDA build {build}: pin `{new}`"
"""

CODE_MODULE = """\
from neuron_migrate.checkers.project.api import Context, Pin, Report, checks

from . import shared


@checks("pin")
def check(pin: Pin, ctx: Context) -> list[Report]:
    case = ctx.case("local-build")
    build = shared.local_build(pin)
    if build is None or not any(pin.named(n) for n in case.names):
        return []
    new = pin.text.replace("+" + build, "")
    return [ctx.report(pin, case, replacement=new, pin=pin.shown, build=build, new=new)]
"""

SHARED = """\
from neuron_migrate.checkers.project.api import Pin


def local_build(pin: Pin) -> str | None:
    for spec in pin.specifier:
        version = spec.version
        if "+" in version:
            return version.split("+", 1)[1]
    return None
"""


def _pack(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "gpu"
    folder.mkdir()
    for name, text in {"pack.toml": PACK, **files}.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _job(folder: Path, fix: bool = False, unsafe: bool = False) -> Job:
    """A run with the pack's rules only: a user's pack, or one with code (as if built in)."""
    if any(folder.glob("*.py")):
        settings = Settings(root=folder.parent)
        rules = tuple(load_pack(folder, with_code=True))
    else:
        settings = Settings(packs=(str(folder),), select=("NM99",), root=folder.parent)
        rules = enabled_rules(settings)
    return Job(rules, settings, Options(fix=fix, unsafe_fixes=unsafe))


def _check(folder: Path, filename: str, text: str, fix: bool = False):
    job = _job(folder, fix)
    return check_text(textwrap.dedent(text), filename, job, filename)


def test_a_data_rule_needs_no_code(tmp_path: Path):
    folder = _pack(tmp_path, {"NM991_cuda_parts.toml": DATA_RULE})
    text = "--extra-index-url https://x/cu121\nnumpy\nnvidia_cublas_cu12==12.1\n"
    result = _check(folder, "requirements.txt", text)
    assert [(f.code, f.span.line, f.message) for f in result.findings] == [
        ("NM991", 1, "`--extra-index-url https://x/cu121` may be a CUDA wheel index"),
        ("NM991", 3, "`nvidia_cublas_cu12==12.1` is a CUDA wheel"),
    ]
    docker = """\
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04 AS build
        ENV CUDA_HOME=/usr/local/cuda
        RUN nvidia-smi -L && make ARCH=sm_80
        RUN pip install -f https://x/cu121 torch
        """
    result = _check(folder, "Dockerfile", docker)
    assert [(f.span.line, f.span.column, f.message) for f in result.findings] == [
        (1, 6, "`nvidia/cuda:12.1.0-devel-ubuntu22.04` is a CUDA base image"),
        (2, 5, "`CUDA_HOME` steers CUDA"),
        (3, 5, "`nvidia-smi -L` asks the GPU driver"),
        (3, 32, "`sm_80` is a GPU architecture"),
        (4, 17, "`-f https://x/cu121` may be a CUDA wheel index"),
    ]
    assert all(f.fix is None for f in result.findings)


def test_a_code_rule_fixes_and_imports_its_pack(tmp_path: Path):
    folder = _pack(
        tmp_path,
        {
            "NM992_cuda_local_version.toml": CODE_RULE,
            "NM992_cuda_local_version.py": CODE_MODULE,
            "shared.py": SHARED,
        },
    )
    result = _check(folder, "requirements.txt", "torch==2.1.2+cu121  # gpu\n", fix=True)
    assert result.fixed_source == "torch==2.1.2  # gpu\n"
    result = _check(folder, "run.sh", "pip install 'torch==2.1.2+cu121'\n")
    (finding,) = result.findings
    assert finding.message == "`torch==2.1.2+cu121` is the CUDA build cu121: pin `torch==2.1.2`"
    assert finding.fix is not None and finding.fix.replacement == "torch==2.1.2"


def test_a_fix_without_a_module_is_refused(tmp_path: Path):
    rule = CODE_RULE.replace('code = "NM992"', 'code = "NM993"')
    folder = _pack(tmp_path, {"NM993_cuda_local_version.toml": rule})
    with pytest.raises(PackError, match="needs a code module NM993_cuda_local_version.py"):
        load_rules((str(folder),))


def test_a_users_pack_runs_no_code(tmp_path: Path):
    folder = _pack(
        tmp_path,
        {
            "NM992_cuda_local_version.toml": CODE_RULE,
            "NM992_cuda_local_version.py": "raise SystemExit('ran')\n",
        },
    )
    with pytest.raises(PackError, match="in a built-in pack"):
        load_rules((str(folder),))


def test_reads_is_checked(tmp_path: Path):
    rule = DATA_RULE.replace('reads = "image"', 'reads = "images"')
    folder = _pack(tmp_path, {"NM991_cuda_parts.toml": rule})
    with pytest.raises(PackError, match="`reads` must be one of"):
        load_rules((str(folder),))


def test_a_module_check_no_case_reads_is_refused(tmp_path: Path):
    module = CODE_MODULE.replace('@checks("pin")', '@checks("line")')
    folder = _pack(
        tmp_path,
        {
            "NM992_cuda_local_version.toml": CODE_RULE,
            "NM992_cuda_local_version.py": module,
            "shared.py": SHARED,
        },
    )
    with pytest.raises(PackError, match="checks 'line' but no match reads it"):
        _check(folder, "requirements.txt", "torch==2.1.2+cu121\n")


# what the checker side of the project files must not contain: rule codes and the names of the
# legacy stack (they are the rules' facts, in rules/)
_FORBIDDEN = (
    "torch_xla",
    "torch-xla",
    "libneuronxla",
    "neuronx_distributed",
    "neuronx-distributed",
    "optimum",
    "neuron_parallel_compile",
    "XLA_",
    "PJRT_",
    "trn1",
    "inf1",
    "inf2",
)


def test_the_project_checker_names_no_rule_and_no_legacy_name():
    root = Path(__file__).resolve().parents[1] / "neuron_migrate"
    for path in sorted((root / "checkers" / "project").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                assert not any(word in text for word in _FORBIDDEN), (path.name, text)
                assert "NM9" not in text, (path.name, text)


LINE_RULE = """\
code = "NM994"
name = "gpu-picks"
severity = "warning"
message = "`{name}` picks GPUs"
why = "NeuronCores are picked otherwise."
fix = "Rename."
source = "https://example.com"
ok = [{ file = "run.sh", code = "torchrun --nproc_per_node=2 t.py\\n" }]

[[match]]
kind = "project"
reads = "line"
case = "visible"
names = ["CUDA_VISIBLE_DEVICES"]
safety = "unsafe"
message = "`{name}` picks GPUs: use `{new}`"

[[match]]
kind = "project"
reads = "command"
case = "per-gpu"
names = ["torchrun"]
safety = "safe"
message = "`{word}` starts one process per GPU"

# no check of images in the module: this case is read as data
[[match]]
kind = "project"
reads = "image"
case = "gpu-image"
names = ["nvidia/*"]
message = "`{name}` is a GPU image"

[[match]]
kind = "project"
reads = "option"
case = "cuda-index"
names = ["--index-url", "--extra-index-url", "-i"]
safety = "unsafe"
message = "`{url}` is a CUDA wheel index"
"""

LINE_MODULE = """\
import re

from neuron_migrate.checkers.project.api import Command, Context, Line, Report, checks

NEW = "NEURON_RT_VISIBLE_CORES"


@checks("line")
def visible(line: Line, ctx: Context) -> list[Report]:
    (name,) = ctx.case("visible").names
    return [
        ctx.report(line.part(*m.span()), "visible", replacement=NEW, name=name, new=NEW)
        for m in re.finditer(rf"\\b{name}\\b", line.text)
    ]


@checks("option")
def cuda_index(option, ctx: Context) -> list[Report]:
    if option.name not in ctx.case("cuda-index").names or "/cu" not in option.value:
        return []
    return [ctx.report(option, "cuda-index", replacement="", url=option.value)]


@checks("command")
def per_gpu(command: Command, ctx: Context) -> list[Report]:
    if command.values[0] not in ctx.case("per-gpu").names:
        return []
    return [
        ctx.report(word, "per-gpu", replacement="--nproc_per_node=2", word=word.value)
        for word in command.words
        if word.value == "--nproc_per_node=gpu"
    ]
"""


def test_a_code_rule_edits_lines_and_words(tmp_path: Path):
    folder = _pack(tmp_path, {"NM994_gpu_picks.toml": LINE_RULE, "NM994_gpu_picks.py": LINE_MODULE})
    script = (
        "export CUDA_VISIBLE_DEVICES=0,1  # two\n"
        "pip install -i https://x/whl/cu121 torch\n"
        "torchrun --nproc_per_node=gpu t.py\n"
    )
    job = _job(folder, fix=True, unsafe=True)
    result = check_text(script, "run.sh", job, "run.sh")
    assert result.fixed_source == (
        "export NEURON_RT_VISIBLE_CORES=0,1  # two\n"
        "pip install torch\n"
        "torchrun --nproc_per_node=2 t.py\n"
    )
    requirements = "--extra-index-url https://x/whl/cu121\ntorch\n"
    result = check_text(requirements, "requirements.txt", job, "requirements.txt")
    assert result.fixed_source == "torch\n"
    (finding,) = check_text("FROM nvidia/cuda:12.1\n", "Dockerfile", job).findings
    assert finding.message == "`nvidia/cuda:12.1` is a GPU image"
    config = '[tool.x]\nenv = "CUDA_VISIBLE_DEVICES=3"\n'
    result = check_text(config, "pyproject.toml", job, "pyproject.toml")
    assert result.fixed_source == '[tool.x]\nenv = "NEURON_RT_VISIBLE_CORES=3"\n'
