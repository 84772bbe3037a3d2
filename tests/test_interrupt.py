"""An interrupted --fix (SIGINT mid-run) leaves every file either wholly old or wholly new."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow  # a real SIGINT during a fix of a large tree

LEGACY = (
    "import torch\n"
    "import torch_xla.core.xla_model as xm\n"
    "\n"
    "def step_{i}(model, batch):\n"
    "    device = xm.xla_device()\n"
    "    loss = model(batch.to(device)).sum()\n"
    "    loss.backward()\n"
    "    xm.mark_step()\n"
    "    return loss\n"
)


def test_sigint_during_fix_leaves_whole_files(tmp_path):
    tree, expected = tmp_path / "tree", tmp_path / "expected"
    tree.mkdir()
    padding = "".join(f"def helper_{j}(x):\n    return x * {j}\n" for j in range(120))
    for i in range(200):
        (tree / f"m{i:03}.py").write_text(LEGACY.format(i=i) + padding)
    shutil.copytree(tree, expected)
    cmd = [sys.executable, "-m", "neuron_migrate", "check", "--fix", "--no-cache", "--jobs", "1"]
    subprocess.run([*cmd, str(expected)], capture_output=True, check=False)
    originals = {p.name: p.read_bytes() for p in tree.iterdir()}
    fixed = {p.name: p.read_bytes() for p in expected.iterdir()}
    assert all(originals[n] != fixed[n] for n in originals)

    proc = subprocess.Popen(
        [*cmd, str(tree)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if any(p.read_bytes() == fixed[p.name] for p in tree.glob("*.py")):
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    states = [
        "new"
        if p.read_bytes() == fixed[p.name]
        else "old"
        if p.read_bytes() == originals[p.name]
        else "torn"
        for p in sorted(tree.glob("*.py"))
    ]
    assert "torn" not in states
    assert "new" in states
    assert not list(tree.glob("*.nm-tmp"))
    assert "Traceback" not in err
    if "old" in states:  # really interrupted (not finished before the signal came)
        assert proc.returncode == 130
        assert "interrupted" in err
