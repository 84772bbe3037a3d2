"""What the engine costs against the floor under it: a bare LibCST parse of the same files.

    python benchmarks/bench_engine.py [FOLDER ...] [--lightning DIR] [--repeat 3] [--json]

FOLDER defaults to the repository's examples/. `--lightning DIR` adds the pinned public tree
(the pure-Python pytorch_lightning 2.5.1 wheel from PyPI), downloaded and unpacked into DIR
with pip the first time. For each tree, best of --repeat rounds (round robin, so load from
other work hits both alike):

- engine: `neuron_migrate.api.run([tree], Settings(root=tree), Options(), jobs=1, cache=False)`:
  discovery, prefilter, read, parse, matching and findings, as `check --no-cache --jobs 1`
  does without the command line and the report;
- bare parse: read + decode + `libcst.parse_module`, serially, of exactly the Python files
  the engine's byte prefilter passes (the ones the engine parses).

The ratio engine / bare parse is the figure to watch. Speed is measured, never asserted.
Profiling is `python -m cProfile` on the command line (benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zipfile
from importlib.metadata import version
from pathlib import Path

import libcst

from neuron_migrate.api import enabled_rules, run
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.workspace.discovery import discover

REPO = Path(__file__).resolve().parent.parent
LIGHTNING = "pytorch_lightning==2.5.1"
LIGHTNING_WHEEL = "pytorch_lightning-2.5.1-py3-none-any.whl"


def fetch_lightning(folder: Path) -> Path:
    """The unpacked wheel in folder/pl, downloaded with pip the first time."""
    tree = folder / "pl"
    if not tree.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", LIGHTNING]
        subprocess.run([*pip, "-d", str(folder)], check=True)
        with zipfile.ZipFile(folder / LIGHTNING_WHEEL) as wheel:
            wheel.extractall(tree)
    return tree


def parsed_files(tree: Path, settings: Settings) -> tuple[list[Path], int, int]:
    """The Python files the engine would parse; also the count and lines of all of them."""
    job = Job(enabled_rules(settings), settings, Options())
    python = [f.path for f in discover([tree], settings) if f.path.suffix == ".py"]
    passing, lines = [], 0
    for path in python:
        data = path.read_bytes()
        lines += data.count(b"\n")
        if job.ruleset_for(path.relative_to(tree).as_posix()).wants(data):
            passing.append(path)
    return passing, len(python), lines


def bench(tree: Path, repeat: int) -> dict:
    settings = Settings(root=tree)
    passing, files, lines = parsed_files(tree, settings)
    parsed_lines = sum(p.read_bytes().count(b"\n") for p in passing)

    def engine() -> int:
        return len(run([tree], settings, Options(), jobs=1, cache=False).findings)

    def bare() -> int:
        for path in passing:
            libcst.parse_module(path.read_bytes().decode("utf-8"))
        return len(passing)

    engine()  # warm: rule loading, imports and the page cache are not what is measured
    best = {"engine": float("inf"), "bare": float("inf")}
    for _ in range(repeat):
        for key, fn in (("engine", engine), ("bare", bare)):
            start = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - start)
    return {
        "tree": tree.name if tree != REPO / "examples" else "examples",
        "python_files": files,
        "lines": lines,
        "files_parsed": len(passing),
        "lines_parsed": parsed_lines,
        "findings": engine(),
        "engine_s": best["engine"],
        "bare_parse_s": best["bare"],
        "ratio": best["engine"] / best["bare"] if best["bare"] else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--lightning", type=Path, metavar="DIR", help=f"add {LIGHTNING}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = [p.resolve() for p in args.folders] or [REPO / "examples"]
    if args.lightning:
        trees.append(fetch_lightning(args.lightning.resolve()))
    load = os.getloadavg()
    results = [bench(tree, args.repeat) for tree in trees]
    if args.json:
        print(json.dumps({"load_before": load, "results": results}, indent=2))
        return
    print(
        f"python {sys.version.split()[0]}, libcst {version('libcst')}, "
        f"{os.cpu_count()} CPUs, best of {args.repeat}, load average {load[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after"
    )
    print(
        f"{'tree':<12} {'files':>6} {'lines':>8} {'parsed':>7} {'lines':>7} {'findings':>8}"
        f" {'engine s':>9} {'parse s':>8} {'ratio':>6}"
    )
    for r in results:
        print(
            f"{r['tree']:<12} {r['python_files']:>6} {r['lines']:>8,} {r['files_parsed']:>7}"
            f" {r['lines_parsed']:>7,} {r['findings']:>8} {r['engine_s']:>9.3f}"
            f" {r['bare_parse_s']:>8.3f} {r['ratio']:>5.2f}x"
        )


if __name__ == "__main__":
    main()
