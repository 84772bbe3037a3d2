"""Does it train? Realistic XLA-era scripts (tests/train/) are migrated with
`check --fix --unsafe-fixes --target-device cpu` and run on the CPU: one process, or torchrun
with two processes (four for the replica-group one) and gloo for the data-parallel ones.

Each script prints its loss per epoch (`loss <float>`) and, on every rank, a parameter
checksum (`param checksum rank=<r>: <float>`). A script trains when it exits 0, its last loss
is below its first, and every rank ends with the same parameters. The migrated tree must also
be clean: no torch_xla import, no "xla" device string (a line marked "not a device" may keep
the word), and a re-check reports neither.

A stub torch_xla package that raises ImportError on import comes first on the path, so an
import the migration left behind fails the run (or takes its fallback, which the checks see).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e import NEEDS_TORCH, first_error, migrate_for_cpu, torchrun

pytestmark = NEEDS_TORCH

SUITE = REPO / "tests" / "train"
TIMEOUT = 600
LOSS_RE = re.compile(r"\bloss:?\s+(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
CHECKSUM_RE = re.compile(r"param checksum rank=(\d+): (-?\d+\.\d{8})")
DEVICE_RE = re.compile(r"^xla(:\d+)?$")
NOT_A_DEVICE = "not a device"
# re-check findings that would mean torch_xla or its device is still there
LEFTOVER_CODES = {"NM101", "NM102", "NM302", "NM603", "NM604"}


@dataclass(frozen=True)
class Script:
    folder: str
    entry: str
    nproc: int = 1
    args: tuple[str, ...] = ()
    # commands run after training, each a script and its arguments (plain python)
    after: tuple[tuple[str, ...], ...] = ()
    # why it does not train yet (xfail while open)
    known_failure: str | None = None
    # modules the migrated script needs beyond torch
    requires: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.folder


SCRIPTS = [
    Script(
        "single_device",
        "train.py",
    ),
    Script(
        "torchrun_mnist",
        "train_torchrun.py",
        nproc=2,
    ),
    Script(
        "xmp_dict_batches",
        "train_xmp.py",
        nproc=2,
    ),
    Script(
        "compile_step",
        "train_compile.py",
    ),
    Script(
        "collectives",
        "train_allreduce.py",
        nproc=2,
        # mesh_reduce becomes dist.all_gather_object, which torch runs through numpy
        requires=("numpy",),
    ),
    Script(
        "checkpoint_resume",
        "train.py",
        nproc=2,
        after=(("evaluate.py",),),
    ),
    Script(
        "notebook",
        "train_cnn.ipynb",
    ),
    Script(
        "package",
        "run.py",
        nproc=2,
    ),
    Script(
        "spawn_from_main",
        "train_mp.py",
        nproc=2,
        # mesh_reduce becomes dist.all_gather_object, which torch runs through numpy
        requires=("numpy",),
    ),
    Script(
        "ddp_config",
        "train_ddp.py",
        nproc=2,
    ),
    Script(
        "replica_groups",
        "train_hierarchical.py",
        # two "hosts" of two cores: XLA replica groups [[0, 1], [2, 3]] and [[0, 2], [1, 3]]
        nproc=4,
    ),
]


def _blocker(tmp_path: Path) -> Path:
    """A torch_xla package that cannot be imported."""
    root = tmp_path / "blocker"
    (root / "torch_xla").mkdir(parents=True)
    (root / "torch_xla" / "__init__.py").write_text(
        'raise ImportError("torch_xla is not installed (test stub)")\n'
    )
    return root


def _migrate(folder: Path) -> list[str]:
    done = migrate_for_cpu(folder)
    if done.returncode in (0, 1):
        return []
    return [f"migration exit {done.returncode}: {done.stderr[-800:]}"]


def _recheck(folder: Path) -> list[dict]:
    command = [sys.executable, "-m", "neuron_migrate", "check", "--format", "json"]
    command += ["--no-cache", "--exit-zero", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def notebook_to_script(notebook: Path) -> Path:
    """The code cells of a notebook as one script, IPython magics and shell lines dropped."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    lines: list[str] = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        lines += [line for line in source.splitlines() if not line.lstrip().startswith(("!", "%"))]
        lines.append("")
    script = notebook.with_suffix(".py")
    script.write_text("\n".join(lines), encoding="utf-8")
    return script


def _sources(folder: Path) -> dict[Path, str]:
    """Python text of every migrated source (a notebook as its code cells)."""
    found = {p: p.read_text(encoding="utf-8") for p in folder.rglob("*.py")}
    for nb in folder.rglob("*.ipynb"):
        found[nb] = notebook_to_script(nb).read_text(encoding="utf-8")
    return found


def leftovers(folder: Path) -> list[str]:
    """torch_xla imports and "xla" device strings left in a migrated tree."""
    problems = []
    for path, text in _sources(folder).items():
        tree = ast.parse(text)
        lines = text.splitlines()
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            bad = [m for m in modules if m.split(".")[0] == "torch_xla"]
            if bad:
                problems.append(f"{path.name}:{node.lineno}: import {bad[0]}")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and DEVICE_RE.match(node.value)
                and NOT_A_DEVICE not in lines[node.lineno - 1]
            ):
                problems.append(f"{path.name}:{node.lineno}: device string {node.value!r}")
    return problems


def _env(blocker: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(blocker), env.get("PYTHONPATH", "")) if p)
    env["OMP_NUM_THREADS"] = "1"
    env.pop("PJRT_DEVICE", None)
    return env


def _run(script: Script, work: Path, blocker: Path) -> subprocess.CompletedProcess:
    entry = script.entry
    if entry.endswith(".ipynb"):
        entry = notebook_to_script(work / entry).name
    if script.nproc > 1:
        return torchrun(entry, *script.args, nproc=script.nproc, cwd=work, env=_env(blocker))
    return subprocess.run(
        [sys.executable, entry, *script.args],
        cwd=work,
        env=_env(blocker),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def train_outcome(script: Script, tmp_path: Path) -> list[str]:
    """Migrate and run one script; the list of what went wrong (empty: it trains)."""
    work = tmp_path / script.folder
    shutil.copytree(SUITE / script.folder, work)
    blocker = _blocker(tmp_path)
    problems = _migrate(work)
    problems += leftovers(work)
    problems += [
        f"re-check: {f['code']} {Path(f['path']).name}:{f['line']} {f['message']}"
        for f in _recheck(work)
        if f["code"] in LEFTOVER_CODES
    ]
    run = _run(script, work, blocker)
    if run.returncode != 0:
        return [*problems, f"exit {run.returncode}: {first_error(run.stderr)}"]
    losses = [float(v) for v in LOSS_RE.findall(run.stdout)]
    if len(losses) < 2 or not losses[-1] < losses[0]:
        problems.append(f"loss did not fall: {losses}")
    sums = {int(r): float(v) for r, v in CHECKSUM_RE.findall(run.stdout)}
    if set(sums) != set(range(script.nproc)):
        problems.append(f"checksums from ranks {sorted(sums)}, expected {script.nproc}")
    elif max(sums.values()) - min(sums.values()) > 1e-5 * max(1.0, abs(sums[0])):
        problems.append(f"ranks ended with different parameters: {sums}")
    for command in script.after:
        after = subprocess.run(
            [sys.executable, *command],
            cwd=work,
            env=_env(blocker),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        if after.returncode != 0:
            problems.append(f"{command[0]} exit {after.returncode}: {first_error(after.stderr)}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.id for s in SCRIPTS])
def test_migrated_script_trains(script: Script, tmp_path: Path, request: pytest.FixtureRequest):
    for module in script.requires:
        pytest.importorskip(module)
    if script.known_failure:
        request.applymarker(pytest.mark.xfail(reason=script.known_failure, strict=True))
    problems = train_outcome(script, tmp_path)
    assert not problems, "\n".join(problems)


def test_suite_has_the_patterns_of_issue_12():
    """At least eight scripts, each folder present, each entry point there."""
    assert len(SCRIPTS) >= 8
    for script in SCRIPTS:
        assert (SUITE / script.folder / script.entry).is_file(), script
