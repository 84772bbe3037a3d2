"""What the language server costs per keystroke: a 2,000-line legacy file re-checked after a
one-line change, against a bare LibCST parse of the same text.

    python benchmarks/bench_server.py [--lines 2000] [--repeat 15] [--lsp]

The file is generated here (seed-free, deterministic): PyTorch modules, training and evaluation
functions, and in every third block a PyTorch/XLA training loop (`xm.xla_device()`,
`xm.optimizer_step`, `xm.mark_step()`). In process: the server's own document path (neuron_migrate.server.documents.Checker: settings,
run_source with a kept Job, one parse) plus the conversion of the findings to LSP diagnostics.
Each round changes one line (a comment at the end of a line in the middle), so no round reuses
the previous result. `--lsp` also times the round trip over stdio (didChange sent to
publishDiagnostics received) with a `neuron-migrate server` subprocess; that figure includes
the server's debounce pause (DEBOUNCE_SECONDS). Speed is measured, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import libcst
from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from neuron_migrate.server.app import DEBOUNCE_SECONDS
from neuron_migrate.server.config import SettingsStore
from neuron_migrate.server.convert import diagnostic, lines_of
from neuron_migrate.server.documents import Checker

HEADER = """\"\"\"A legacy PyTorch/XLA training module, generated for the server benchmark.\"\"\"

import logging
import math

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

logger = logging.getLogger(__name__)
"""

BLOCK = """

class Block{i}(nn.Module):
    \"\"\"A small residual block ({i}).\"\"\"

    def __init__(self, width: int = {width}) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, width * 2)
        self.out = nn.Linear(width * 2, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(self.norm(x))
        h = torch.nn.functional.gelu(h)
        return x + self.out(h)


def evaluate_{i}(model, batches) -> list:
    results = []
    for x in batches:
        with torch.no_grad():
            results.append(model(x).mean().item())
    return [round(r, 4) for r in results if not math.isnan(r)]
"""

LEGACY = """

def train_{i}(model, loader, optimizer, steps: int = {steps}) -> float:
    device = xm.xla_device()
    model = model.to(device)
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.mark_step()
        total += loss.item()
        if step >= steps:
            break
    logger.info("block %d: %.4f", {i}, total / max(1, steps))
    return total
"""


def make_source(lines: int) -> str:
    """About `lines` lines of module code, a legacy training loop in every third block."""
    parts = [HEADER]
    i = 0
    while sum(part.count("\n") for part in parts) < lines:
        parts.append(BLOCK.format(i=i, width=64 + 8 * (i % 7)))
        if i % 3 == 0:
            parts.append(LEGACY.format(i=i, steps=100 + i))
        i += 1
    return "".join(parts)


def edited(text: str, round_: int) -> str:
    """The text with one line changed: a comment added to a line in the middle."""
    lines = text.split("\n")
    middle = len(lines) // 2
    for index in range(middle, len(lines)):
        line = lines[index]
        if line.strip() and not line.rstrip().endswith(("\\", ",", "(", "[", "{", '"')):
            if '"""' not in line and "'''" not in line:
                lines[index] = f"{line}  # edit {round_}"
                return "\n".join(lines)
    raise ValueError("no line to edit")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def in_process(text: str, path: Path, repeat: int) -> tuple[list[float], int]:
    checker = Checker(SettingsStore())
    codec = PositionCodec(lsp.PositionEncodingKind.Utf16)
    uri = path.as_uri()
    checker.check_text(uri, text)  # the first check builds the rule sets
    times = []
    found = 0
    for round_ in range(repeat):
        variant = edited(text, round_)

        def once(variant: str = variant) -> None:
            nonlocal found
            checked = checker.check_text(uri, variant)
            lines = lines_of(variant)
            found = len(
                [
                    diagnostic(f, lines, codec, checker.rule(checked.settings, f.code))
                    for f in checked.result.findings
                ]
            )

        times.append(timed(once))
    return times, found


def over_lsp(text: str, path: Path, repeat: int) -> list[float]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from lsp_driver import LspClient  # the tests' JSON-RPC client

    times = []
    with LspClient(path.parent) as client:
        doc = client.open(path, text)
        client.diagnostics(doc)
        for round_ in range(repeat):
            variant = edited(text, round_)
            start = time.perf_counter()
            client.change(doc, round_ + 2, variant)
            client.diagnostics(doc)
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--lsp", action="store_true", help="also time the stdio round trip")
    args = parser.parse_args()
    text = make_source(args.lines)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "legacy_train.py"
        path.write_text(text, encoding="utf-8")
        parse = [timed(lambda: libcst.parse_module(text)) for _ in range(args.repeat)]
        check, found = in_process(text, path, args.repeat)
        rows = [("bare libcst.parse_module", parse), ("server re-check (in process)", check)]
        if args.lsp:
            rows.append(("didChange -> diagnostics (stdio)", over_lsp(text, path, args.repeat)))
    print(
        f"{text.count(chr(10))} lines, {found} findings, best / median of {args.repeat}, "
        f"load average {[round(x, 2) for x in os.getloadavg()]}"
    )
    for name, times in rows:
        print(f"  {name:<34} {min(times) * 1000:8.1f} ms {statistics.median(times) * 1000:8.1f} ms")
    ratio = min(check) / min(parse)
    print(f"  re-check / bare parse               {ratio:8.2f}x (best)")
    if args.lsp:
        print(f"  (the stdio figure includes the {DEBOUNCE_SECONDS * 1000:.0f} ms debounce pause)")


if __name__ == "__main__":
    main()
