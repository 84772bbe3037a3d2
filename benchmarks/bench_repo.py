"""Real-repository benchmark: neuron-migrate cold, cached and warm on any folder, and TorchFix /
Fixit on the same folder in the same run when they can be found.

    python benchmarks/bench_repo.py FOLDER [--repeat 3] [--jobs N]
        [--torchfix CMD] [--fixit CMD]

TorchFix and Fixit are looked for in this Python environment (`python -m torchfix`,
`python -m fixit`) and on PATH; `--torchfix` / `--fixit` name a command explicitly (for
example one installed in another venv, since TorchFix 0.7 pins an older libcst). Speed is
measured, never asserted. Each figure is the best of --repeat wall-clock runs, except the
other tools, which run once (they take minutes).

- cold:   no neuron-migrate cache (the folder's .neuron_migrate_cache is removed first); the
  parsed rule packs kept per user (like Python's bytecode caches) are there
- first:  cold, and no parsed rule packs either (a fresh NEURON_MIGRATE_CACHE_DIR each run)
- cached: right after, nothing changed: every parsed file is a cache hit
- warm:   --no-cache, with the interpreter and the page cache warm
- startup: `neuron-migrate --version`, the floor under any run; the cached re-run is reported
  as a multiple of it (the goal: within 3x)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# as installed: Python may write its bytecode caches (an environment that forbids it makes every
# run compile every module, which is not what a user's run costs)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or ENV
    )
    return time.perf_counter() - start, proc.returncode


def _best(cmd: list[str], repeat: int, before=None, env=None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        times.append(_time(cmd, env=env() if callable(env) else env)[0])
    return min(times)


def _tool(name: str, explicit: str | None, module: str, args: list[str]) -> list[str] | None:
    if explicit:
        return [*explicit.split(), *args]
    if importlib.util.find_spec(module) is not None:
        return [sys.executable, "-m", module, *args]
    found = shutil.which(name)
    return [found, *args] if found else None


def count(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*.py") if ".neuron_migrate_cache" not in p.parts]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return len(files), lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--torchfix", help="command that runs TorchFix (default: search)")
    parser.add_argument("--fixit", help="command that runs Fixit (default: search)")
    parser.add_argument("--skip-others", action="store_true", help="do not run TorchFix / Fixit")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = args.folder.resolve()
    cache = folder / ".neuron_migrate_cache"
    nm = [sys.executable, "-m", "neuron_migrate", "check", "--exit-zero", "-q"]
    if args.jobs:
        nm += ["--jobs", str(args.jobs)]

    files, lines = count(folder)
    figures: dict[str, float | int | None] = {"files": files, "lines": lines}
    _time([*nm, "--no-cache", str(folder)])  # bytecode caches written, page cache warm
    figures["startup"] = _best([sys.executable, "-m", "neuron_migrate", "--version"], args.repeat)
    figures["cold"] = _best(
        [*nm, str(folder)], args.repeat, before=lambda: shutil.rmtree(cache, ignore_errors=True)
    )
    # the first run on a machine: no parsed rule packs in the per-user cache either
    with tempfile.TemporaryDirectory() as scratch:
        fresh = iter(range(10**6))
        figures["first"] = _best(
            [*nm, str(folder)],
            args.repeat,
            before=lambda: shutil.rmtree(cache, ignore_errors=True),
            env=lambda: {**ENV, "NEURON_MIGRATE_CACHE_DIR": f"{scratch}/{next(fresh)}"},
        )
    _time([*nm, str(folder)])  # make sure the cache is full
    figures["cached"] = _best([*nm, str(folder)], args.repeat)
    figures["warm"] = _best([*nm, "--no-cache", str(folder)], args.repeat)
    shutil.rmtree(cache, ignore_errors=True)

    others = {}
    if not args.skip_others:
        torchfix = _tool("torchfix", args.torchfix, "torchfix", [str(folder)])
        fixit = _tool("fixit", args.fixit, "fixit", ["lint", str(folder)])
        for name, cmd in (("torchfix", torchfix), ("fixit", fixit)):
            if cmd is not None:
                others[name] = _time(cmd)[0]
    figures.update(others)

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"folder: {folder}  ({files} Python files, {lines} lines)")
    print(f"neuron-migrate cold   {figures['cold']:8.2f} s")
    print(f"neuron-migrate first  {figures['first']:8.2f} s   (cold, no parsed packs kept either)")
    print(
        f"neuron-migrate cached {figures['cached']:8.2f} s   cold/cached = {figures['cold'] / figures['cached']:.1f}x"
    )
    print(f"neuron-migrate warm   {figures['warm']:8.2f} s   (--no-cache)")
    print(
        f"neuron-migrate --version {figures['startup']:5.2f} s   "
        f"cached/startup = {figures['cached'] / figures['startup']:.1f}x"
    )
    for name, seconds in others.items():
        print(f"{name:<21} {seconds:8.2f} s   {name}/cold = {seconds / figures['cold']:.1f}x")
    if not others and not args.skip_others:
        print("TorchFix / Fixit not found (pass --torchfix / --fixit to compare)")


if __name__ == "__main__":
    main()
