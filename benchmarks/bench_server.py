"""What the language server costs per keystroke: a 2,000-line legacy file re-checked after a
one-line change, against a bare LibCST parse of the same text.

    python benchmarks/bench_server.py [--lines 2000] [--repeat 15] [--seed 0] [--lsp]

In process: the server's own document path (neuron_migrate.server.documents.Checker: settings,
run_source with a kept Job, one parse) plus the conversion of the findings to LSP diagnostics.
Each round changes one line (a comment at the end of a line in the middle), so no round reuses
the previous result. `--lsp` also times the round trip over stdio (didChange sent to
publishDiagnostics received) with a `neuron-migrate server` subprocess; that figure includes
the server's debounce pause (DEBOUNCE_SECONDS). Speed is measured, never asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import libcst  # noqa: E402
from bench_engine import make_source  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pygls.workspace.position_codec import PositionCodec  # noqa: E402

from neuron_migrate.server.app import DEBOUNCE_SECONDS  # noqa: E402
from neuron_migrate.server.config import SettingsStore  # noqa: E402
from neuron_migrate.server.convert import diagnostic, lines_of  # noqa: E402
from neuron_migrate.server.documents import Checker  # noqa: E402


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
    from lsp_driver import LspClient

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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lsp", action="store_true", help="also time the stdio round trip")
    args = parser.parse_args()
    text = make_source(random.Random(args.seed), args.lines, legacy=True)
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
