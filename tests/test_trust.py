"""What the tool says is true and what it writes never breaks a user's files (issue 11):
each section holds the tests of one item."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.cli import main

LEGACY = "import torch_xla.core.xla_model as xm\n\ndef step():\n    xm.mark_step()\n    return 1\n"


def check(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["check", "--no-cache", *args], input=input)


def as_json(*args: str) -> list[dict]:
    result = check("--format", "json", *args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return json.loads(result.stdout)


# ---- 2. --fix that cannot write a file does not report success ------------------------------


@pytest.mark.parametrize("locked", ["file", "folder"])
def test_fix_that_cannot_write_keeps_findings_and_fails(tmp_path, locked):
    folder = tmp_path / "src"
    folder.mkdir()
    path = folder / "ro.py"
    path.write_text(LEGACY)
    target = path if locked == "file" else folder
    target.chmod(0o555 if locked == "folder" else 0o444)
    try:
        result = check("--fix", str(path))
    finally:
        target.chmod(0o755 if locked == "folder" else 0o644)
    assert path.read_text() == LEGACY
    assert result.exit_code == 1
    assert "Fixed 0 findings (1 remaining)." in result.stdout
    assert f"{locked} is read-only" in result.stderr
    assert "NM201" in result.stdout
