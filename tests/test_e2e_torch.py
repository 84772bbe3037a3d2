"""End to end with a real torch: migrate an example with the console script, then run it.

Skipped where torch is not installed. torch_xla is never needed: a stub package that raises
ImportError on import is put first on the migrated script's path, so any torch_xla import
the migration left unguarded fails the run (and a guarded one takes its fallback).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import NEEDS_TORCH, migrate_for_cpu

pytestmark = [pytest.mark.slow, NEEDS_TORCH]  # runs the migrated examples with real torch


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TIMEOUT = 300


def _migrate(folder: Path, *extra: str) -> subprocess.CompletedProcess:
    done = migrate_for_cpu(folder, *extra, unsafe=False, timeout=TIMEOUT)
    # 0: nothing left to report; 1: findings remain (a manual change); 2 would be an error
    assert done.returncode in (0, 1), f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _xla_imports(path: Path, guarded_ok: bool = False) -> list[str]:
    """The torch_xla imports of a file (with guarded_ok, those outside a `try:` that catches
    ImportError), as 'line: module'."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    if guarded_ok:
        for node in ast.walk(tree):
            if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers
            ):
                guarded.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules = [node.module or ""]
        else:
            continue
        found += [
            f"{node.lineno}: {m}" for m in modules if m == "torch_xla" or m.startswith("torch_xla.")
        ]
    return found


def _run(script: str, cwd: Path, blocker: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(blocker), env.get("PYTHONPATH", "")) if p)
    env.pop("PJRT_DEVICE", None)
    done = subprocess.run(
        [sys.executable, script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A `torch_xla` package whose import fails like a missing one."""
    stub = tmp_path / "blocker" / "torch_xla"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("torch_xla is blocked in this test")\n')
    return stub.parent


def test_single_device_migrates_and_trains(tmp_path: Path, blocker: Path):
    import torch

    work = tmp_path / "single_device"
    shutil.copytree(EXAMPLES / "single_device", work)
    assert _xla_imports(work / "train.py"), "the example should start as PyTorch/XLA code"

    _migrate(work)

    assert _xla_imports(work / "train.py") == [], (work / "train.py").read_text()
    checkpoint = tmp_path / "ckpt.pt"
    done = _run("train.py", work, blocker, "--steps", "3", "--out", str(checkpoint))
    assert "done: steps=3" in done.stdout, done.stdout
    assert checkpoint.is_file()
    state = torch.load(checkpoint)
    assert state and all(isinstance(v, torch.Tensor) for v in state.values())
    assert {"fc1.weight", "out.bias"} <= set(state)


def test_model_package_migrates_and_trains(tmp_path: Path, blocker: Path):
    work = tmp_path / "model_package"
    shutil.copytree(EXAMPLES / "model_package", work)

    _migrate(work, "--unsafe-fixes")

    # device.py keeps its `try: import torch_xla ... except ImportError` fallback (a finding
    # is left for it); nothing else may import torch_xla any more
    for path in sorted(work.rglob("*.py")):
        assert _xla_imports(path, guarded_ok=True) == [], (
            f"{path.relative_to(work)}:\n{path.read_text()}"
        )
    done = _run("run.py", work, blocker, "--steps", "3", "--batch-size", "4", "--seq-len", "16")
    assert "done: steps=3" in done.stdout, done.stdout
