"""For the end-to-end tests, which run what a fix writes: migrate a folder for the CPU with the
installed command, and run a script under torchrun (`--standalone`, a free port each time).

Two failures say nothing about the migrated code and are not reported as failures:

- a launch that fails before the script runs on a busy machine (the rendezvous store times out
  or loses its port) is tried once more;
- an abort while the interpreter shuts down, after the script has run. With torch 2.13 on
  Python 3.11 a gloo worker thread ("pt_gloo_runloop") that asks for the GIL during
  finalization is ended by CPython, and the forced unwind through torch's C++ frame calls
  std::terminate ("terminate called without an active exception", SIGABRT; seen with gdb).
  A four-line gloo all_reduce script without any of our code does it in about one run in
  four. torchrun then stops the other rank (SIGTERM). Such a run is returned with exit code 0
  so that the test's own checks of what the ranks printed and wrote decide.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

# the end-to-end tests run torch in subprocesses: skipped without it, and torch is not imported
# while tests are collected (1.4 s the fast lane would pay for tests it deselects)
NEEDS_TORCH = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="needs torch (pip install torch)"
)

TIMEOUT = 600
SHUTDOWN_ABORT = "terminate called without an active exception"
EXIT_CODE = re.compile(r"exitcode\s*:\s*(-?\d+)")
RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d+\]: ?", re.M)
RANK_LINE = re.compile(r"^\[(?:rank|default)\d+\]:.*$", re.M)
LAUNCH_FLAKES = (
    "DistNetworkError",
    "Address already in use",
    "Connection refused",
    "Connection reset",
    "timed out",
    "Timed out",
)


def migrate_for_cpu(
    folder: Path, *extra: str, unsafe: bool = True, timeout: int = TIMEOUT
) -> subprocess.CompletedProcess:
    """`neuron-migrate check --fix [--unsafe-fixes] --target-device cpu --no-cache [extra] folder`
    in a process of its own, as a user runs it."""
    command = [sys.executable, "-m", "neuron_migrate", "check", "--fix"]
    command += ["--unsafe-fixes"] if unsafe else []
    command += ["--target-device", "cpu", "--no-cache", *extra, str(folder)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def torchrun(
    *args: str,
    nproc: int,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: int = TIMEOUT,
) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc_per_node={nproc}", *args]

    def launch() -> subprocess.CompletedProcess:
        return subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )

    done = launch()
    if done.returncode != 0 and any(flake in done.stderr for flake in LAUNCH_FLAKES):
        done = launch()
    if done.returncode != 0 and aborted_in_shutdown(done.stderr):
        done.returncode = 0
    return done


def aborted_in_shutdown(stderr: str) -> bool:
    """Every failed rank aborted in finalization (or was stopped by torchrun because a sibling
    did), and no rank raised."""
    codes = {int(code) for code in EXIT_CODE.findall(stderr)}
    return (
        SHUTDOWN_ABORT in stderr
        and -6 in codes
        and codes <= {-6, -15}
        and "Traceback" not in "\n".join(m.group(0) for m in RANK_LINE.finditer(stderr))
    )


def first_error(stderr: str) -> str:
    """The first traceback's last lines: torchrun prints the children's (each line prefixed
    "[rankN]:") before its own, and the children's say what went wrong."""
    lines = RANK_PREFIX.sub("", stderr).splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            rest = lines[i + 1 :]
            for j, after in enumerate(rest):
                if after and not after.startswith(" "):
                    return "\n".join(rest[max(0, j - 2) : j + 1])
    return stderr[-800:]
