"""The built wheel carries rules/ and works from a fresh venv."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # builds and installs the wheel in a new venv


def test_wheel_installs_and_lists_every_rule(tmp_path: Path, all_rules):
    dist = tmp_path / "dist"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(dist),
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0 and "No module named build" in build.stderr:
        pytest.skip("the `build` package is not installed")
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(dist.glob("neuron_migrate-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    out = subprocess.run(
        [str(env_dir / "bin" / "neuron-migrate"), "rules"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert out.returncode == 0, out.stderr
    for rule in all_rules:
        assert rule.code in out.stdout
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import neuron_migrate.packs.loader as p; print(p.builtin_rules_dir())",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "site-packages" in where.stdout, where.stdout + where.stderr
