"""--stdin-filename: code from stdin; with --fix the fixed code goes to stdout (for editors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_cli import LEGACY


def nm(*args: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuron_migrate", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def test_stdin_check_reports_under_the_given_name(tmp_path):
    proc = nm("check", "--stdin-filename", "src/train.py", stdin=LEGACY, cwd=tmp_path)
    assert proc.returncode == 1
    assert "src/train.py:4:10: NM101" in proc.stdout
    proc = nm("check", "--stdin-filename", "t.py", "--format", "json", stdin=LEGACY, cwd=tmp_path)
    assert [d["path"] for d in json.loads(proc.stdout)] == ["t.py", "t.py"]


def test_stdin_fix_prints_the_fixed_code(tmp_path):
    proc = nm("check", "--fix", "--stdin-filename", "train.py", stdin=LEGACY, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert 'device = torch.device("neuron")' in proc.stdout
    assert "torch_xla" not in proc.stdout
    assert not (tmp_path / "train.py").exists()  # nothing written


def test_stdin_fix_of_clean_code_echoes_it(tmp_path):
    code = "import torch\nx = torch.ones(1)\n"
    proc = nm("check", "--fix", "--stdin-filename", "a.py", stdin=code, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == code


def test_stdin_fix_leaves_what_is_left_on_stderr(tmp_path):
    code = "import torch_xla.core.xla_model as xm\n\ndev = xm.xla_device(1)\nxm.mark_step()\n"
    proc = nm("check", "--fix", "--stdin-filename", "a.py", stdin=code, cwd=tmp_path)
    assert proc.returncode == 1  # the unsafe NM101 fix is not applied without --unsafe-fixes
    assert "mark_step" not in proc.stdout and "xm.xla_device(1)" in proc.stdout
    assert "a.py:3:7: NM101" in proc.stderr and "NM101" not in proc.stdout


def test_stdin_diff(tmp_path):
    proc = nm("check", "--diff", "--stdin-filename", "train.py", stdin=LEGACY, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("--- train.py")


def test_stdin_force_exclude_passes_through(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrate]\nexclude = ["vendor"]\n')
    proc = nm(
        "check",
        "--fix",
        "--force-exclude",
        "--stdin-filename",
        "vendor/x.py",
        stdin=LEGACY,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and proc.stdout == LEGACY
    proc = nm(
        "check", "--force-exclude", "--stdin-filename", "vendor/x.py", stdin=LEGACY, cwd=tmp_path
    )
    assert proc.returncode == 0 and "NM101" not in proc.stdout
