"""--since REV: only findings on lines added or changed since the merge base, from real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from neuron_migrate.adoption.since import parse_diff
from tests.test_cli import LEGACY, invoke


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "old.py").write_text(LEGACY)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "legacy")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    return tmp_path


def found(repo: Path, *args: str) -> list[tuple[str, int, str]]:
    result = invoke("check", "--format", "json", *args, ".", cwd=repo)
    return [(d["path"], d["line"], d["code"]) for d in json.loads(result.stdout)]


def test_since_reports_only_new_lines(repo):
    assert found(repo, "--since", "main") == []
    assert invoke("check", "--since", "main", ".", cwd=repo).exit_code == 0
    # a committed change on the branch
    text = LEGACY.replace(
        "    x = torch.ones(2).to(device)\n",
        "    x = torch.ones(2).to(device)\n    xm.mark_step()\n",
    )
    (repo / "old.py").write_text("# header\n" + text)
    git(repo, "commit", "-q", "-am", "more xla")
    # an uncommitted edit and an untracked file count too
    (repo / "new.py").write_text("import torch_xla.core.xla_model as xm\nd = xm.xla_device()\n")
    assert found(repo, "--since", "main") == [("new.py", 2, "NM101"), ("old.py", 8, "NM201")]
    assert len(found(repo)) == 4  # without --since: everything
    result = invoke("check", "--since", "main", ".", cwd=repo)
    assert result.exit_code == 1


def test_since_uses_the_merge_base(repo):
    git(repo, "checkout", "-q", "main")
    (repo / "main_only.py").write_text(LEGACY)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "on main")
    git(repo, "checkout", "-q", "feature")
    (repo / "branch.py").write_text(LEGACY)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "on feature")
    assert {p for p, _, _ in found(repo, "--since", "main")} == {"branch.py"}


def test_since_unknown_rev_is_exit_2(repo):
    result = invoke("check", "--since", "no-such-branch", ".", cwd=repo)
    assert result.exit_code == 2 and "git merge-base" in result.output


def test_since_outside_a_repository_is_exit_2(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    result = invoke("check", "--since", "main", ".", cwd=tmp_path)
    assert result.exit_code == 2


def test_parse_diff(tmp_path):
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -3 +3,2 @@\n-a\n+b\n+c\n"
        "@@ -10,2 +11,0 @@\n-d\n-e\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    assert parse_diff(diff, tmp_path) == {(tmp_path / "x.py").resolve(): {3, 4}}
