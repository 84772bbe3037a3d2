"""Run a script under torchrun (`--standalone`, a free port each time) for the end-to-end tests.

A launch can fail before the script runs when the machine is busy (the rendezvous store times
out or loses its port); that says nothing about the migrated code, so such a launch is tried
once more. Any other failure is returned as it is.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TIMEOUT = 600
RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d+\]:", re.M)
LAUNCH_FLAKES = (
    "DistNetworkError",
    "Address already in use",
    "Connection refused",
    "Connection reset",
    "timed out",
    "Timed out",
)


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
    return done


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
