"""The pre-commit hooks, through the real `pre-commit try-repo` on a temporary git repository.

try-repo installs this checkout into pre-commit's own environment (pip, from the package index
for the build backend), so this test needs the network that CI has; it is slow (~1 min) once,
then pre-commit's cache (one per test session) makes the other runs quick.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_cli import LEGACY

pytestmark = pytest.mark.slow  # real pre-commit: installs the hooks' environments

pytest.importorskip("pre_commit")

NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["import torch_xla.core.xla_model as xm\n", "xm.mark_step()"],
        }
    ],
    "metadata": {"language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This checkout's files (as they are in the work tree) committed once in a repository of
    their own, so that every try-repo of the session uses one revision and one install."""
    target = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git(target, "init", "-q")
    git(target, "add", ".")
    git(target, "commit", "-q", "-m", "snapshot")
    return target


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "legacy.py").write_text(LEGACY)
    (tmp_path / "notes.md").write_text("# notes\n")
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrate]\nexclude = ["vendor"]\n')
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "old.py").write_text(LEGACY)
    (tmp_path / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "legacy")
    return tmp_path


def try_repo(
    repo: Path, home: Path, hook: str, *files: str, source: Path
) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("PRE_COMMIT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(source), hook, "--files", *files],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_hooks_file_declares_both_hooks():
    text = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "- id: neuron-migrate\n" in text and "- id: neuron-migrate-fix\n" in text
    assert text.count("  files: '") == 2
    assert text.count("--force-exclude") == 2


def test_check_hook_fails_then_passes_after_the_fix_hook(repo, home, hook_repo):
    first = try_repo(repo, home, "neuron-migrate", "legacy.py", source=hook_repo)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "legacy.py:4:10: NM101" in first.stdout
    fixing = try_repo(repo, home, "neuron-migrate-fix", "legacy.py", source=hook_repo)
    assert fixing.returncode == 1  # a hook that changes files fails the commit, as usual
    assert "files were modified by this hook" in fixing.stdout
    assert 'torch.device("neuron")' in (repo / "legacy.py").read_text()
    again = try_repo(repo, home, "neuron-migrate", "legacy.py", source=hook_repo)
    assert again.returncode == 0, again.stdout
    assert "Passed" in again.stdout


def test_excluded_named_files_and_no_files_are_clean(repo, home, hook_repo):
    excluded = try_repo(repo, home, "neuron-migrate", "vendor/old.py", source=hook_repo)
    assert excluded.returncode == 0, excluded.stdout
    none = try_repo(repo, home, "neuron-migrate", "notes.md", source=hook_repo)
    assert none.returncode == 0, none.stdout
    assert "no files to check" in none.stdout


def test_notebooks_are_checked_by_the_hook(repo, home, hook_repo):
    proc = try_repo(repo, home, "neuron-migrate", "nb.ipynb", source=hook_repo)
    assert proc.returncode == 1, proc.stdout
    assert "nb.ipynb:cell 1:2:1: NM201" in proc.stdout
