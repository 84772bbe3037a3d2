"""The command line, through click's CliRunner and through the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.cli import main
from tests.conftest import REPO

LEGACY = """\
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
for step in range(3):
    x = torch.ones(2).to(device)
    xm.mark_step()  # cut the graph
"""


def invoke(*args: str, cwd: Path | None = None):
    runner = CliRunner()
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(LEGACY)
    (tmp_path / "clean.py").write_text("import torch\nprint(torch.ones(1))\n")
    return tmp_path


def test_check_reports_and_exits_1(project):
    result = invoke("check", str(project))
    assert result.exit_code == 1
    assert "train.py:4:10: NM101 [*]" in result.output
    assert "train.py:7:5: NM201 [*]" in result.output
    assert "4 | device = xm.xla_device()" in result.output
    assert "Found 2 findings in 1 file." in result.output
    assert "[*] 2 fixable with `--fix`." in result.output


def test_clean_tree_exits_0(project):
    result = invoke("check", str(project / "clean.py"))
    assert result.exit_code == 0
    assert "All checks passed!" in result.output


def test_exit_zero(project):
    assert invoke("check", "--exit-zero", str(project)).exit_code == 0


def test_json_format(project):
    result = invoke("check", "--format", "json", str(project))
    data = json.loads(result.output)
    assert [d["code"] for d in data] == ["NM101", "NM201"]
    first = data[0]
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (
        4,
        10,
        4,
        25,
    )
    assert first["fix"] == {"safety": "safe", "replacement": 'torch.device("neuron")'}
    assert first["severity"] == "error" and first["name"] == "xla-device"
    assert first["url"].startswith("https://awsdocs-neuron")


def test_fix_writes_and_second_run_is_clean(project):
    result = invoke("check", "--fix", str(project))
    assert result.exit_code == 0, result.output
    assert "Fixed 2 findings (0 remaining)." in result.output
    text = (project / "train.py").read_text()
    assert "torch_xla" not in text
    assert 'device = torch.device("neuron")' in text
    assert invoke("check", str(project)).exit_code == 0
    before = (project / "train.py").stat().st_mtime_ns
    invoke("check", "--fix", str(project))
    assert (project / "train.py").stat().st_mtime_ns == before


def test_diff_writes_nothing(project):
    result = invoke("check", "--diff", str(project))
    assert result.exit_code == 1
    assert "-device = xm.xla_device()" in result.output
    assert '+device = torch.device("neuron")' in result.output
    assert (project / "train.py").read_text() == LEGACY


def test_select_and_ignore_prefixes(project):
    out = invoke("check", "--select", "NM2", str(project)).output
    assert "NM201" in out and "NM101" not in out
    out = invoke("check", "--ignore", "NM201", str(project)).output
    assert "NM101" in out and "NM201" not in out
    out = invoke("check", "--select", "ALL", "--ignore", "NM", str(project)).output
    assert "All checks passed!" in out
    out = invoke("check", "--select", "mark-step", str(project)).output
    assert "NM201" in out and "NM101" not in out


def test_unknown_selector_is_usage_error(project):
    result = invoke("check", "--select", "NM999", str(project))
    assert result.exit_code == 2
    assert "unknown rule selector `NM999`" in result.output


def test_target_device(project):
    invoke("check", "--fix", "--target-device", "cpu", str(project))
    assert 'torch.device("cpu")' in (project / "train.py").read_text()
    assert invoke("check", "--target-device", "Not A Device!", str(project)).exit_code == 2


def test_noqa(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch_xla.core.xla_model as xm\n"
        "xm.mark_step()  # noqa: NM201\n"
        "d = xm.xla_device()  # noqa\n"
        "xm.mark_step()  # noqa: NM101\n"
    )
    data = json.loads(invoke("check", "--format", "json", str(tmp_path)).stdout)
    assert [(d["code"], d["line"]) for d in data] == [("NM201", 4)]


def test_pyproject_settings(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.neuron-migrate]\n"
        'ignore = ["NM101"]\n'
        'target-device = "cpu"\n'
        'exclude = ["legacy_vendor"]\n'
        '[tool.neuron-migrate.per-file-ignores]\n"scripts/*.py" = ["NM2"]\n'
    )
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.py").write_text(LEGACY)
    (tmp_path / "legacy_vendor").mkdir()
    (tmp_path / "legacy_vendor" / "x.py").write_text(LEGACY)
    (tmp_path / "train.py").write_text(LEGACY)
    data = json.loads(invoke("check", "--format", "json", ".", cwd=tmp_path).output)
    assert [(d["path"], d["code"]) for d in data] == [("train.py", "NM201")]


def test_broken_config_is_exit_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.neuron-migrate]\nselekt = ['NM1']\n")
    (tmp_path / "a.py").write_text(LEGACY)
    result = invoke("check", ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert "unknown setting `selekt`" in result.output
    (tmp_path / "pyproject.toml").write_text("[tool.neuron-migrate\n")
    result = invoke("check", ".", cwd=tmp_path)
    assert result.exit_code == 2 and "not valid TOML" in result.output


def test_gitignore_and_default_excludes(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_old.py\n")
    for rel in ["generated/a.py", "b_old.py", ".venv/lib/c.py", "build/d.py", "src/e.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LEGACY)
    data = json.loads(invoke("check", "--format", "json", ".", cwd=tmp_path).output)
    assert {d["path"] for d in data} == {"src/e.py"}


def test_bad_input_is_one_line_and_run_goes_on(tmp_path):
    (tmp_path / "a_syntax.py").write_text("import torch_xla\ndef f(:\n")
    (tmp_path / "b_binary.py").write_bytes(b"torch_xla\x00\x01")
    (tmp_path / "c_latin.py").write_bytes(b"import torch_xla\nx = '\xe9'\n")
    (tmp_path / "d_good.py").write_text(LEGACY)
    result = invoke("check", "--format", "json", str(tmp_path))
    data = json.loads(result.output)
    by_file = {Path(d["path"]).name: d for d in data if d["code"] == "NM000"}
    assert set(by_file) == {"a_syntax.py", "b_binary.py", "c_latin.py"}
    assert "syntax error" in by_file["a_syntax.py"]["message"]
    assert "binary" in by_file["b_binary.py"]["message"]
    assert "decode" in by_file["c_latin.py"]["message"]
    assert any(d["code"] == "NM101" for d in data)
    assert result.exit_code == 1


def test_missing_path(tmp_path):
    result = invoke("check", str(tmp_path / "nope.py"))
    assert "NM000" in result.output and "no such file" in result.output


def test_fix_keeps_crlf_bom_mode(tmp_path):
    path = tmp_path / "w.py"
    path.write_bytes(b"\xef\xbb\xbf" + LEGACY.replace("\n", "\r\n").encode())
    path.chmod(0o754)
    invoke("check", "--fix", str(path))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"torch.device" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(path.stat().st_mode) == 0o754


def test_latin1_with_cookie_is_fixed(tmp_path):
    path = tmp_path / "l.py"
    src = "# -*- coding: latin-1 -*-\nimport torch_xla.core.xla_model as xm\nname = 'caf\xe9'\nxm.mark_step()\n"
    path.write_bytes(src.encode("latin-1"))
    invoke("check", "--fix", str(path))
    assert path.read_bytes() == "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")


def test_read_only_file_is_left_alone(tmp_path):
    path = tmp_path / "r.py"
    path.write_text(LEGACY)
    path.chmod(0o444)
    result = invoke("check", "--fix", str(path))
    assert "read-only" in result.output
    assert path.read_text() == LEGACY


def test_rules_lists_every_rule(all_rules):
    result = invoke("rules")
    assert result.exit_code == 0
    for rule in all_rules:
        assert rule.code in result.output and rule.name in result.output


def test_explain():
    result = invoke("explain", "NM202")
    assert result.exit_code == 0
    for part in (
        "# NM202 step-context",
        "## Why",
        "## Example",
        "`neuron-migrate check` prints:",
        "`neuron-migrate check --fix` writes:",
        "## Fix",
        "Source: https://",
    ):
        assert part in result.output
    assert invoke("explain", "mark-step").exit_code == 0
    assert invoke("explain", "NM999").exit_code == 2


def test_compile_setting(tmp_path):
    src = (
        "import torch\nimport torch_xla.core.xla_model as xm\n\nmodel = Net()\nmodel.to(device)\n"
        "for b in data:\n    xm.mark_step()\n"
    )
    (tmp_path / "c.py").write_text(src)
    invoke("check", "--fix", "--unsafe-fixes", str(tmp_path))
    assert "torch.compile" not in (tmp_path / "c.py").read_text()
    (tmp_path / "c.py").write_text(src)
    invoke("check", "--fix", "--unsafe-fixes", "--compile", str(tmp_path))
    assert (
        'model = torch.compile(model, backend="neuron", dynamic=False)'
        in (tmp_path / "c.py").read_text()
    )


def _script() -> str | None:
    found = shutil.which("neuron-migrate", path=str(Path(sys.executable).parent))
    return found


def test_console_script_subprocess(project):
    script = _script()
    assert script is not None, "the console script is installed with the package"
    proc = subprocess.run([script, "check", str(project)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "NM101" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", "--format", "json", str(project)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and json.loads(proc.stdout)
    assert "\x1b[" not in proc.stdout  # no colour when piped


def test_examples_main_command():
    proc = subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", str(REPO / "examples")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "NM101" in proc.stdout and "Found" in proc.stdout


def test_sharding_example_is_reported_line_by_line():
    """FSDP / SPMD have no automatic fix: every use is its own finding; the NeuronX Distributed
    lines are reported one by one too, with an unsafe fix (NM314 layers, NM315 parallel state)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "neuron_migrate",
            "check",
            "--format",
            "json",
            str(REPO / "examples" / "sharding"),
        ],
        capture_output=True,
        text=True,
    )
    data = json.loads(proc.stdout)
    manual = [(d["line"], d["code"]) for d in data if d["fix"] is None]
    assert ("NM311" in {c for _, c in manual}) and ("NM312" in {c for _, c in manual})
    nxd = [d for d in data if d["code"] in ("NM314", "NM315")]
    assert len(nxd) >= 4 and all(d["fix"] is not None for d in nxd)
    assert len({line for line, _ in manual}) >= 4


def test_compat_branches_are_reported_and_fixed(tmp_path):
    path = tmp_path / "compat.py"
    path.write_text(
        "try:\n"
        "    import torch_xla.core.xla_model as xm\n"
        "    HAS_XLA = True\n"
        "except ImportError:\n"
        "    xm = None\n"
        "    HAS_XLA = False\n"
        "\n"
        "def sync():\n"
        "    if HAS_XLA:\n"
        "        xm.mark_step()\n"
    )
    out = invoke("check", "--format", "json", str(path)).output
    assert [d["code"] for d in json.loads(out)] == ["NM201"]
    invoke("check", "--fix", str(path))
    fixed = path.read_text()
    # the branch that only cut the XLA graph is gone with its body (issue 12, item 8)
    assert "if HAS_XLA" not in fixed
    assert "def sync():\n    pass\n" in fixed
    compile(fixed, "compat.py", "exec")


class _Terminal:
    """A stderr that says it is a terminal and records what is drawn."""

    def __init__(self):
        import io

        self.buffer = io.StringIO()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return self.buffer.write(text)

    def flush(self) -> None:
        pass


def test_progress_bar_on_a_terminal_for_long_runs(tmp_path, monkeypatch):
    from neuron_migrate.api import run
    from neuron_migrate.checkers.base import Options
    from neuron_migrate.cli import progress
    from neuron_migrate.config.settings import Settings

    for i in range(5):
        (tmp_path / f"f{i}.py").write_text(LEGACY)
    terminal = _Terminal()
    assert isinstance(progress.bar(True, terminal), progress.Bar)
    assert isinstance(progress.bar(False, terminal), progress.Silent)
    piped = _Terminal()
    piped.isatty = lambda: False
    assert isinstance(progress.bar(True, piped), progress.Silent)
    monkeypatch.setattr(progress, "MIN_FILES", 3)
    bar = progress.bar(True, terminal)
    calls = []
    original = bar.advance
    bar.advance = lambda n=1: (calls.append(n), original(n))
    result = run([tmp_path], Settings(root=tmp_path), Options(), jobs=1, progress=bar)
    bar.close()
    assert len(calls) == 5 and len(result.files) == 5
    short = progress.bar(True, terminal)
    short.start(2)  # below MIN_FILES: nothing drawn
    assert short._progress is None


def test_no_progress_bar_when_piped(project):
    proc = subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", str(project)],
        capture_output=True,
        text=True,
    )
    assert "━" not in proc.stderr and "checking" not in proc.stderr
