"""Project files (pack `project`, NM901-NM905): kinds, formats, suppression, fixes, writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_migrate.api import check_text, enabled_rules, run
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.checkers.project.rules import project_rules
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import load_rules
from neuron_migrate.workspace import filekinds
from tests.conftest import REPO, codes, fixed, run_code


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("requirements.txt", "project"),
        ("requirements-dev.txt", "project"),
        ("constraints.txt", "project"),
        ("pyproject.toml", "project"),
        ("setup.cfg", "project"),
        ("setup.py", "project"),
        ("run.sh", "project"),
        ("Dockerfile", "project"),
        ("Dockerfile.train", "project"),
        ("cluster.yaml", "project"),
        ("job.json", "project"),
        ("train.py", "python"),
        ("notes.txt", None),
    ],
)
def test_kinds(name, kind):
    assert filekinds.kind_of(name) == kind


def test_requirements_noqa_and_markers():
    text = "torch-xla==2.1  # noqa: NM901\ntorch-neuronx==2.1.2.2.0 ; python_version < '3.12'\n"
    result = run_code(text, filename="requirements.txt", fix=True, dedent=False)
    assert [f.code for f in result.findings] == []
    assert result.fixed_source == (
        "torch-xla==2.1  # noqa: NM901\ntorch-neuronx==2.14.* ; python_version < '3.12'\n"
    )
    assert result.applied == 1


def test_requirements_span_and_fix_field():
    result = run_code("numpy\ntorch-xla==2.1.2  # old\n", filename="requirements.txt")
    (finding,) = result.findings
    assert (finding.code, finding.span.line, finding.span.column) == ("NM901", 2, 1)
    assert finding.span.end_column == len("torch-xla==2.1.2") + 1
    assert finding.fix.replacement == "torch-neuronx==2.14.*"
    assert finding.source_line == "torch-xla==2.1.2  # old"


def test_torch_213_keeps_the_213_pair():
    out = fixed("torch==2.13.0\ntorch-xla\n", filename="requirements.txt")
    assert out == "torch==2.13.0\ntorch-neuronx==2.13.*\n"


def test_crlf_kept():
    out = fixed("torch-xla==2.1\r\nlibneuronxla\r\nnumpy\r\n", filename="requirements.txt")
    assert out == "torch-neuronx==2.14.*\r\nnumpy\r\n"


def test_hash_pinned_line_is_not_rewritten():
    text = "torch-xla==2.1 --hash=sha256:abc\n"
    result = run_code(text, filename="requirements.txt", fix=True, dedent=False)
    assert [f.code for f in result.findings] == ["NM901"]
    assert result.fixed_source is None


def test_not_a_neuron_project():
    assert codes("torch==2.1.2\n", filename="requirements.txt") == []
    assert (
        codes(
            '[project]\nname = "x"\nrequires-python = ">=3.8"\ndependencies = ["torch==2.1"]\n',
            filename="pyproject.toml",
        )
        == []
    )


def test_pyproject_optional_and_poetry():
    text = """\
[project]
name = "x"
dependencies = ["torch-neuronx==2.14.*"]

[project.optional-dependencies]
xla = [
    "torch-xla==2.1",  # gone
    "numpy",
]

[tool.poetry.dependencies]
python = "^3.10"
torch-neuronx = "2.1.2.2.0"
"""
    result = run_code(text, filename="pyproject.toml", dedent=False)
    assert [(f.code, f.span.line) for f in result.findings] == [
        ("NM901", 7),
        ("NM903", 12),
        ("NM901", 13),
    ]
    out = fixed(text, filename="pyproject.toml", dedent=False, unsafe=True)
    assert 'xla = [\n    "numpy",\n]' in out
    assert 'python = ">=3.12"' in out
    assert 'torch-neuronx = "2.14.*"' in out


def test_setup_py_runs_python_rules_too():
    text = """\
import torch_xla.core.xla_model as xm
from setuptools import setup

setup(install_requires=["torch-xla>=2.1", "numpy"], python_requires=">=3.8")
"""
    found = codes(text, filename="setup.py", dedent=False)
    assert "NM901" in found and "NM903" in found and "NM603" in found
    out = fixed(text, filename="setup.py", dedent=False)
    assert 'install_requires=["torch-neuronx==2.14.*", "numpy"]' in out
    assert "torch_xla" not in out


def test_a_setup_py_is_read_when_python_or_project_rules_could_find_something():
    from neuron_migrate.checkers.project import PROJECT

    settings = Settings(root=REPO)
    job = Job(enabled_rules(settings), settings, Options())
    assert PROJECT.wants(b"import torch_xla\n", job, "setup.py")  # a Python rule's trigger
    assert PROJECT.wants(b'setup(install_requires=["torch-xla"])\n', job, "pkg/setup.py")
    assert not PROJECT.wants(b"from setuptools import setup\nsetup(name='x')\n", job, "setup.py")


def test_setup_cfg_extras():
    text = "[options.extras_require]\nxla =\n    torch-xla==2.1\n    torch-neuronx\n"
    out = fixed(text, filename="setup.cfg", dedent=False)
    assert out == "[options.extras_require]\nxla =\n    torch-neuronx\n"


def test_shell_multiprocess_and_pip():
    text = """\
#!/bin/bash
export PJRT_DEVICE=NEURON
pip install torch-neuronx==2.1.2.2.0 "torch==2.1.2"
python -u train.py --nprocs 8  # noqa: NM905
python -m torch_xla.distributed.xla_dist -- python train.py
optimum-cli export neuron --model gpt2 out/
"""
    result = run_code(text, filename="run.sh", dedent=False)
    assert [(f.code, f.span.line) for f in result.findings] == [
        ("NM904", 2),
        ("NM901", 3),
        ("NM902", 3),
        ("NM904", 4),
        ("NM904", 5),
        ("NM904", 6),
    ]
    out = fixed(text, filename="run.sh", dedent=False)
    assert 'pip install "torch-neuronx==2.14.*" "torch==2.14.*"' in out
    assert "PJRT_DEVICE" not in out


def test_single_device_python_start_is_fine():
    assert codes("export PJRT_DEVICE=NEURON  # noqa\npython train.py\n", filename="a.sh") == []


def test_dockerfile_env_and_run():
    text = "FROM x\nENV PJRT_DEVICE=NEURON\nENV HF_HOME=/c XLA_FLAGS=--a\nRUN neuron_parallel_compile python t.py\n"
    result = run_code(text, filename="Dockerfile", dedent=False)
    assert [(f.code, f.span.line, f.fix is not None) for f in result.findings] == [
        ("NM904", 2, True),
        ("NM904", 3, False),
        ("NM904", 4, False),
    ]
    assert fixed(text, filename="Dockerfile", dedent=False).count("\n") == 3


def test_instances_only_as_instance_types():
    text = '{"a": "ml.trn1.2xlarge", "b": "trn1", "c": "inf2.48xlarge", "d": "x.trn1.2xlarge"}\n'
    result = run_code(text, filename="job.json", dedent=False)
    assert [(f.code, f.span.column) for f in result.findings] == [("NM905", 8), ("NM905", 45)]


def test_per_file_ignores_apply():
    settings = Settings(per_file_ignores={"ops/*.sh": ("NM904",)}, root=REPO)
    job = Job(enabled_rules(settings), settings, Options())

    def check(text, filename, job, relative):
        return check_text(text, filename, job, relative)

    assert check("export XLA_FLAGS=1\n", "ops/run.sh", job, "ops/run.sh").findings == []
    assert check("export XLA_FLAGS=1\n", "run.sh", job, "run.sh").findings


def test_fix_writes_the_file(tmp_path: Path):
    target = tmp_path / "requirements.txt"
    target.write_bytes(b"torch-xla==2.1\r\n")
    settings = Settings(root=tmp_path)
    result = run([tmp_path], settings, Options(fix=True), jobs=1)
    assert result.fixed == 1
    assert target.read_bytes() == b"torch-neuronx==2.14.*\r\n"


@pytest.mark.slow
def test_this_repository_has_no_project_findings():
    """The tool's own pyproject, rule packs and data files are not legacy projects."""
    settings = Settings(root=REPO, extend_exclude=("examples", "golden", "behaviour_snapshot.json"))
    result = run([REPO], settings, Options(), jobs=1)
    project = [f for f in result.findings if f.code.startswith("NM9")]
    assert project == []


def test_project_rules_load_with_their_modules():
    """Every project rule's cases fit its module (a check per item type a case reads)."""
    rules = project_rules(load_rules())
    assert rules, "no project rule found"
    for project_rule in rules:
        reads = {p.reads for p in project_rule.rule.patterns if p.kind == "project"}
        assert set(project_rule.checks) == reads
