"""Every torch_xla.compile rewrite (NM204) runs under torch.compile on the CPU: a whole training
step (zero_grad, backward, optimizer.step) compiled with full_graph=True, the decorator form and
the `with torch_xla.compile():` form are migrated for the cpu target and run with real torch."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import fixed

# the programs run in a subprocess: torch is needed there, not imported here (1.4 s to collect)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

PRELUDE = """
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 4)
y = x.sum(1, keepdim=True)
"""

FORMS = {
    "whole-step-full-graph": """
def step_fn(data, target):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    optimizer.step()
    return loss

step = torch_xla.compile(step_fn, full_graph=True, name="train_step")
losses = [step(x, y).item() for _ in range(5)]
""",
    "decorator": """
@torch_xla.compile
def forward(data):
    return model(data)

losses = []
for _ in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(forward(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
""",
    "with-block": """
losses = []
for _ in range(5):
    with torch_xla.compile():
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    losses.append(loss.item())
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("form", sorted(FORMS))
def test_compile_rewrite_runs_under_torch_compile(form: str):
    source = PRELUDE + textwrap.dedent(FORMS[form])
    out = fixed(source, target="cpu", unsafe=True, dedent=False)
    assert "torch_xla" not in out
    assert "fullgraph" not in out
    script = out + "\nassert losses[-1] < losses[0], losses\nprint('ok', losses)\n"
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, out + run.stderr[-3000:]
    assert run.stdout.startswith("ok")
