"""What the tool says is true and what it writes never breaks a user's files (issue 11):
each section holds the tests of one item."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from neuron_migrate.cli import main

LEGACY = "import torch_xla.core.xla_model as xm\n\ndef step():\n    xm.mark_step()\n    return 1\n"


def check(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["check", "--no-cache", *args], input=input)


def as_json(*args: str) -> list[dict]:
    result = check("--format", "json", *args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return json.loads(result.stdout)


# ---- 2. --fix that cannot write a file does not report success ------------------------------


@pytest.mark.parametrize("locked", ["file", "folder"])
def test_fix_that_cannot_write_keeps_findings_and_fails(tmp_path, locked):
    folder = tmp_path / "src"
    folder.mkdir()
    path = folder / "ro.py"
    path.write_text(LEGACY)
    target = path if locked == "file" else folder
    target.chmod(0o555 if locked == "folder" else 0o444)
    try:
        result = check("--fix", str(path))
    finally:
        target.chmod(0o755 if locked == "folder" else 0o644)
    assert path.read_text() == LEGACY
    assert result.exit_code == 1
    assert "Fixed 0 findings (1 remaining)." in result.stdout
    assert f"{locked} is read-only" in result.stderr
    assert "NM201" in result.stdout


# ---- 5. configuration and options ------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    ["[tool]\nneuron-migrate = 3\n", "tool = 3\n", '[tool]\nneuron-migrate = ["a"]\n'],
)
def test_malformed_tool_table_is_a_configuration_error(tmp_path, monkeypatch, config):
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "a.py").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    result = check("a.py")
    assert result.exit_code == 2
    assert "Traceback" not in result.output and result.exception is not None
    assert isinstance(result.exception, SystemExit)
    assert str(tmp_path / "pyproject.toml") in result.stderr


@pytest.mark.parametrize("device", ["tpu", "xla", "meta"])
def test_target_device_is_neuron_cpu_or_cuda(tmp_path, device):
    path = tmp_path / "a.py"
    path.write_text("import torch_xla.core.xla_model as xm\nd = xm.xla_device()\n")
    result = check("--fix", "--target-device", device, str(path))
    assert result.exit_code == 2
    assert "neuron" in result.stderr and "cuda" in result.stderr
    assert "xla_device" in path.read_text()
    help_text = CliRunner().invoke(main, ["check", "--help"]).output
    assert "neuron|cpu|cuda" in help_text


def test_target_device_in_the_configuration_is_checked_too(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrate]\ntarget-device = "tpu"\n')
    (tmp_path / "a.py").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    result = check("a.py")
    assert result.exit_code == 2 and "pyproject.toml" in result.stderr


def test_unknown_code_in_per_file_ignores_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.neuron-migrate.per-file-ignores]\n"a.py" = ["NM999"]\n'
    )
    (tmp_path / "a.py").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    result = check("a.py")
    assert result.exit_code == 2
    assert "NM999" in result.stderr and str(tmp_path / "pyproject.toml") in result.stderr


def test_codes_are_case_insensitive_everywhere(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.neuron-migrate]\nignore = ["nm101"]\n'
        '[tool.neuron-migrate.per-file-ignores]\n"b.py" = ["nm2"]\n'
    )
    (tmp_path / "a.py").write_text(LEGACY)
    (tmp_path / "b.py").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    data = as_json("--select", "nm2,Nm1", ".")
    assert [(Path(d["path"]).name, d["code"]) for d in data] == [("a.py", "NM201")]
    assert as_json("--select", "all", "--ignore", "nm201", "a.py") == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--add-noqa", "--fix"], ["--add-noqa", "--fix"]),
        (["--diff", "--statistics"], ["--diff", "--statistics"]),
        (["--stdin-filename", "x.py", "a.py"], ["--stdin-filename"]),
    ],
)
def test_conflicting_options_are_refused(tmp_path, monkeypatch, args, words):
    (tmp_path / "a.py").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    result = check(*args, input=LEGACY)
    assert result.exit_code == 2
    assert all(w in result.stderr for w in words)
    assert (tmp_path / "a.py").read_text() == LEGACY


# ---- 3. one file cannot take the run down ----------------------------------------------------

# LibCST's native parser dies (SIGSEGV) on this; Python's flat BoolOp hid its depth from the
# depth guard of the main branch
CRASHER = "import torch_xla\nx = " + " and ".join(["a"] * 20000) + "\n"


def _crash_tree(root: Path, others: int = 70) -> None:
    for i in range(others):
        (root / f"m{i:03}.py").write_text(LEGACY)
    (root / "m_crash.py").write_text(CRASHER)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    return subprocess.run(
        [sys.executable, "-m", "neuron_migrate", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_crashes_the_parser_is_one_nm000(tmp_path, jobs):
    _crash_tree(tmp_path)
    done = _cli("check", "--no-cache", "--format", "json", "--jobs", jobs, ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    crash = [d for d in data if d["path"] == "m_crash.py"]
    assert [d["code"] for d in crash] == ["NM000"]
    assert "LibCST" in crash[0]["message"] and "Python itself accepts it" in crash[0]["message"]
    assert sum(1 for d in data if d["code"] == "NM201") == 70


def test_chains_python_takes_say_the_parser_is_the_limit(tmp_path):
    for n in (500, 2000, 4000):
        (tmp_path / f"add{n}.py").write_text(
            "import torch_xla\nx = " + " + ".join(["1"] * n) + "\n"
        )
    data = as_json(str(tmp_path))
    assert len(data) == 3
    for d in data:
        assert d["code"] == "NM000"
        try:
            compile(Path(d["path"]).read_text(), d["path"], "exec")
        except RecursionError:
            assert "Python's own parser gives up on it too" in d["message"]
        else:
            assert "LibCST" in d["message"] and "Python itself accepts it" in d["message"]


def test_the_parser_probe_reports_a_crash():
    from neuron_migrate.checkers.python import parser_survives

    assert parser_survives(CRASHER) == "SIGSEGV"
    assert parser_survives("x = " + " and ".join(["a"] * 200) + "\n") is None


def test_a_crash_past_the_guard_is_isolated_in_one_process(monkeypatch, tmp_path):
    """Were the depth guard wrong, a risky file is parsed in a process of its own first."""
    from neuron_migrate.checkers import python as pipeline

    monkeypatch.setattr(pipeline, "measure_nesting", lambda text: pipeline.Nesting(None, True))
    (tmp_path / "crash.py").write_text(CRASHER)
    (tmp_path / "good.py").write_text(LEGACY)
    data = as_json("--jobs", "1", str(tmp_path))
    assert [(Path(d["path"]).name, d["code"]) for d in data] == [
        ("crash.py", "NM000"),
        ("good.py", "NM201"),
    ]
    assert "crashed" in data[0]["message"] and "SIGSEGV" in data[0]["message"]


@pytest.mark.slow
def test_the_pool_survives_a_dead_worker(monkeypatch, tmp_path):
    """Were the guard and the probe both wrong, a worker dies; the pool checks the others."""
    import multiprocessing

    from neuron_migrate.api import POOL_THRESHOLD, run
    from neuron_migrate.checkers import python as pipeline
    from neuron_migrate.checkers.base import Options
    from neuron_migrate.config.settings import Settings

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the workers must inherit the patched guard")
    monkeypatch.setattr(pipeline, "measure_nesting", lambda text: pipeline.Nesting(None))
    _crash_tree(tmp_path, POOL_THRESHOLD + 6)
    result = run([tmp_path], Settings(root=tmp_path), Options(), jobs=2, cache=False)
    codes = [(Path(f.path).name, f.code) for f in result.findings]
    assert ("m_crash.py", "NM000") in codes
    assert sum(1 for _, code in codes if code == "NM201") == POOL_THRESHOLD + 6
    crash = next(f for f in result.findings if f.code == "NM000")
    assert "crashed" in crash.message and "SIGSEGV" in crash.message


# ---- 6. honest edge cases --------------------------------------------------------------------


def test_a_path_with_nothing_to_check_is_a_warning(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here\n")
    result = check(str(tmp_path))
    assert result.exit_code == 0
    assert "All checks passed!" not in result.output
    assert f"warning: no Python files found under {tmp_path}" in result.stderr


@pytest.mark.parametrize("body", [b"x = 1\x00\n", b"import torch_xla\x00\n"])
def test_a_binary_python_file_is_nm000_with_or_without_a_trigger(tmp_path, body):
    (tmp_path / "x.py").write_bytes(body)
    data = as_json(str(tmp_path / "x.py"))
    assert [(d["code"], "binary" in d["message"]) for d in data] == [("NM000", True)]


@pytest.mark.parametrize("source", [[1, 2], 5, {"a": "b"}, ["import torch_xla\n", None]])
def test_a_notebook_cell_source_that_is_not_text_is_nm000(tmp_path, source):
    nb = {
        "cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": []}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    result = check("--format", "json", str(tmp_path / "n.ipynb"))
    assert result.exit_code == 1 and "internal error" not in result.output
    data = json.loads(result.stdout)
    assert [d["code"] for d in data] == ["NM000"] and "cell 1" in data[0]["message"]


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import torch_xla\nx = = 1\ny = 2\n", 2),
        ("import torch_xla\n\ndef f(:\n    pass\n", 3),
        ("import torch_xla\nprint 'hello'\nz = 3\n", 2),
    ],
)
def test_a_syntax_error_is_reported_on_its_own_line(tmp_path, code, line):
    (tmp_path / "s.py").write_text(code)
    data = as_json(str(tmp_path / "s.py"))
    assert [(d["code"], d["line"]) for d in data] == [("NM000", line)]


def test_dash_reads_standard_input():
    result = check("--format", "json", "-", input=LEGACY)
    assert result.exit_code == 1
    assert [(d["path"], d["code"]) for d in json.loads(result.stdout)] == [("-", "NM201")]


def test_nm000_is_a_rule_to_explain_select_and_ignore(tmp_path):
    runner = CliRunner()
    assert "NM000" in runner.invoke(main, ["rules"]).output
    assert "engine" in runner.invoke(main, ["rules"]).output
    page = runner.invoke(main, ["explain", "nm000"])
    assert page.exit_code == 0 and "parse-error" in page.output
    (tmp_path / "bad.py").write_text("import torch_xla\nx = = 1\n")
    (tmp_path / "good.py").write_text(LEGACY)
    assert {d["code"] for d in as_json("--select", "NM000", str(tmp_path))} == {"NM000"}
    ignored = check("--format", "json", "--ignore", "NM000", str(tmp_path))
    assert {d["code"] for d in json.loads(ignored.stdout)} == {"NM201"}
    # a file not checked is never silent: a warning line instead of a finding
    assert "warning: " in ignored.stderr and "bad.py:2:5: not checked" in ignored.stderr


# ---- 1. notebook cells that run Python are checked -------------------------------------------


def _notebook(*sources: str) -> str:
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s}
        for s in sources
    ]
    meta = {"kernelspec": {"language": "python", "name": "python3"}}
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


def _cells(path: Path) -> list[str]:
    return [c["source"] for c in json.loads(path.read_text())["cells"]]


IMPORT = "import torch\nimport torch_xla.core.xla_model as xm\n"


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1", "%%capture out", "%%prun -s time"])
def test_python_cell_magics_are_checked_and_fixed(tmp_path, magic):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook(IMPORT, f"{magic}\nd = xm.xla_device()\nx = torch.ones(2).to(d)\n"))
    data = as_json(str(path))
    assert ("NM101", 2, 2) in {(d["code"], d["cell"], d["line"]) for d in data}
    result = check("--fix", str(path))
    assert result.exit_code == 0, result.output
    cells = _cells(path)
    assert cells[1].startswith(magic + "\nd = torch.device(")
    assert "xm" not in "".join(cells)  # every use was fixed: the import went too
    assert as_json(str(path)) == []


def test_a_line_magic_statement_is_checked_and_fixed(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook(IMPORT, "%time d = xm.xla_device()\n%timeit -n 2 -r1 xm.mark_step()"))
    data = as_json(str(path))
    assert {(d["code"], d["cell"], d["line"]) for d in data} >= {
        ("NM101", 2, 1),
        ("NM201", 2, 2),
    }
    check("--fix", str(path))
    cells = _cells(path)
    assert cells[1].startswith('%time d = torch.device("neuron")')
    assert "xm.xla_device" not in cells[1]


def test_shell_cells_go_through_the_launcher_checker(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text(
        _notebook(
            "%%bash\nexport PJRT_DEVICE=NEURON\ntorchrun train.py\n",
            "%%script bash\nexport XLA_FLAGS=--xla_dump_to=/tmp\n",
        )
    )
    data = as_json(str(path))
    assert {(d["code"], d["cell"], d["line"]) for d in data} == {("NM904", 1, 2), ("NM904", 2, 2)}
    assert check("--fix", str(path)).exit_code == 0
    assert _cells(path) == ["%%bash\ntorchrun train.py\n", "%%script bash\n"]


@pytest.mark.parametrize("magic", ["%%px", "%%sql"])
def test_an_import_an_unchecked_cell_may_use_is_kept(tmp_path, magic):
    path = tmp_path / "n.ipynb"
    path.write_text(
        _notebook(IMPORT, "xm.mark_step()\n", f"{magic}\nxm.mark_step()\n", "%%html\n<b>xm</b>\n")
    )
    result = check("--fix", str(path))
    cells = _cells(path)
    assert "import torch_xla.core.xla_model as xm" in cells[0]  # cell 3 may still use it
    assert cells[1] == ""
    assert cells[2] == f"{magic}\nxm.mark_step()\n"
    assert f"cell 3: a `{magic}` cell: not checked" in result.stderr
    assert "cell 4: a `%%html` cell: not checked" in result.stderr
    assert not any(d["code"] == "NM603" for d in as_json(str(path)))


def test_an_import_a_shell_line_interpolates_is_kept(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook(IMPORT, "xm.mark_step()\n!echo {xm.__file__}\n"))
    check("--fix", str(path))
    assert "import torch_xla.core.xla_model as xm" in _cells(path)[0]


# ---- 4. symlinks -----------------------------------------------------------------------------


def test_fix_through_a_link_keeps_the_link_and_fixes_its_target(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.neuron-migrate]\n")
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "train.py"
    target.write_text(LEGACY)
    link = tmp_path / "train.py"
    link.symlink_to(Path("real") / "train.py")
    monkeypatch.chdir(tmp_path)
    result = check("--fix", "train.py")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "train.py")
    assert "mark_step" not in target.read_text()


def test_fix_through_a_link_out_of_the_project_leaves_it(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "shared.py"
    target.write_text(LEGACY)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.neuron-migrate]\n")
    link = project / "shared.py"
    link.symlink_to(target)
    monkeypatch.chdir(project)
    result = check("--fix", "shared.py")
    assert result.exit_code == 1
    assert link.is_symlink() and target.read_text() == LEGACY
    assert "outside the project" in result.stderr
    assert "Fixed 0 findings (1 remaining)." in result.stdout


# ---- 7. the readiness report adds up and scales ----------------------------------------------

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_report_headline_is_the_sum_of_its_tables_and_what_check_says():
    import csv
    import io

    runner = CliRunner()
    stats = json.loads(
        runner.invoke(
            main, ["check", "--no-cache", "--statistics", "--format", "json", str(EXAMPLES)]
        ).stdout
    )
    safe = sum(s["fixable"] for s in stats)
    total = sum(s["count"] for s in stats)
    text = runner.invoke(main, ["check", "--no-cache", str(EXAMPLES)]).stdout
    rows = list(
        csv.DictReader(
            io.StringIO(runner.invoke(main, ["report", "--format", "csv", str(EXAMPLES)]).stdout)
        )
    )
    head = rows[0]
    rules = [r for r in rows if r["section"] == "rule"]
    for column in ("findings", "safe", "unsafe", "manual"):
        assert int(head[column]) == sum(int(r[column]) for r in rules), column
        for section in ("pack", "file"):
            part = [r for r in rows if r["section"] == section]
            assert int(head[column]) == sum(int(r[column]) for r in part), (section, column)
    assert int(head["findings"]) == total and int(head["safe"]) == safe
    assert f"[*] {safe} fixable with `--fix` ({head['unsafe']} more" in text
    assert f"{head['manual']} need a manual change" in text
    blockers = [r for r in rows if r["section"] == "blocker"]
    groups = [r for r in rows if r["section"] == "blocker-rule"]
    assert sum(int(r["findings"]) for r in blockers) == sum(int(r["findings"]) for r in groups)
    page = runner.invoke(main, ["report", str(EXAMPLES)]).stdout
    assert f"{head['safe']} (" in page and f"by hand: {head['manual']}" in page


def test_what_to_do_for_a_blocker_never_talks_about_the_fix(all_rules):
    from neuron_migrate.report.readiness import instruction

    for rule in all_rules:
        text = instruction(rule, rule.code)
        assert "--fix" not in text and "--unsafe-fixes" not in text, rule.code
        assert not text.startswith("`--fix` rewrites")


def _legacy_tree(root: Path, files: int) -> None:
    body = (
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n"
        "from torch_xla.amp import GradScaler\n\n\ndef train(model, tensors):\n"
        "    if xr.device_type() == 'NEURON':\n        cores = xr.local_device_count()\n"
        "    torch_xla._XLAC._xla_sync_multi(tensors, devices=[])\n"
        "    scaler = GradScaler()\n    xm.mark_step()\n    return cores, scaler\n"
    )
    for i in range(files):
        folder = root / f"pkg{i // 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"module_{i:04}.py").write_text(body)


@pytest.mark.slow
def test_report_on_a_large_tree_groups_blockers_and_runs_once(tmp_path, monkeypatch):
    from neuron_migrate import api

    _legacy_tree(tmp_path, 300)
    monkeypatch.chdir(tmp_path)
    runs = []
    real = api.run

    def counting(*args, **kwargs):
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "run", counting)
    runner = CliRunner()
    out = {}
    for fmt in ("markdown", "html", "csv"):
        result = runner.invoke(main, ["report", "--format", fmt, "--jobs", "1", "."])
        assert result.exit_code == 0, result.output
        out[fmt] = result.stdout
    assert len(runs) == 3  # one run of the checks per report, as `check` does
    blockers = 300 * 2
    for fmt, text in out.items():
        # each rule's instruction once, not once per blocker
        assert len(text) < 150 * blockers, (fmt, len(text))
    groups = out["markdown"].count("\n### NM")
    assert 1 <= groups <= 4 and out["markdown"].count("What to do:") == groups
    assert "### NM604 `other-xla-api`: 300 in 300 files" in out["markdown"]


# ---- 12. what a ruff user expects ------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def test_pre_commit_hooks_pass_every_kind_of_file_the_tool_reads():
    import re

    import yaml

    from neuron_migrate.workspace.filekinds import kind_of

    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    read = [
        "train.py",
        "stubs/x.pyi",
        "nb/train.ipynb",
        "requirements.txt",
        "deps/requirements-dev.txt",
        "dev-requirements.txt",
        "constraints.txt",
        "requirements.in",
        "pyproject.toml",
        "pkg/setup.cfg",
        "setup.py",
        "Dockerfile",
        "docker/Dockerfile.neuron",
        "Containerfile",
        "train.dockerfile",
        "scripts/run.sh",
        "launch.bash",
    ]
    skipped = ["README.md", "notes.txt", "data.csv", "Makefile"]
    for hook in hooks:
        files = re.compile(hook["files"])
        for name in read:
            assert files.search(name), (hook["id"], name)
            assert kind_of(name) is not None, name
        for name in skipped:
            assert not files.search(name), (hook["id"], name)


def test_no_made_up_project_url():
    for path in [REPO / "README.md", *sorted((REPO / "neuron_migrate").rglob("*.py"))]:
        assert "github.com/neuron-migrate" not in path.read_text(), path
    result = CliRunner().invoke(
        main, ["check", "--no-cache", "--format", "sarif", "-"], input=LEGACY
    )
    driver = json.loads(result.stdout)["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver


def _project(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.neuron-migrate]\nexclude = ["vendor"]\n')
    for folder in ("src", "tests", "vendor"):
        (root / folder).mkdir()
        (root / folder / "m.py").write_text(LEGACY)


def test_extend_ignore_exclude_and_per_file_ignores_on_the_command_line(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)

    def found(*args):
        return sorted((d["path"], d["code"]) for d in as_json(*args, "."))

    assert found() == [("src/m.py", "NM201"), ("tests/m.py", "NM201")]
    assert found("--extend-ignore", "nm201") == []
    assert found("--extend-exclude", "tests") == [("src/m.py", "NM201")]
    assert found("--exclude", "src") == [("tests/m.py", "NM201"), ("vendor/m.py", "NM201")]
    assert found("--per-file-ignores", "tests/*.py:NM2") == [("src/m.py", "NM201")]
    assert found("--per-file-ignores", "tests/*.py:NM2,src/*:NM201") == []
    bad = check("--per-file-ignores", "tests/*.py:NM999", ".")
    assert bad.exit_code == 2 and "NM999" in bad.stderr


def test_show_settings_and_show_files(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    settings = check("--show-settings", "--extend-ignore", "NM2", ".")
    assert settings.exit_code == 0
    assert str(tmp_path / "pyproject.toml") in settings.stdout
    assert "ignore = ['NM2']" in settings.stdout and "exclude = ['vendor']" in settings.stdout
    assert "NM101" in settings.stdout and "NM201," not in settings.stdout
    files = check("--show-files", ".")
    assert files.exit_code == 0
    assert files.stdout.split() == ["pyproject.toml", "src/m.py", "tests/m.py"]


@pytest.mark.parametrize(
    ("directive", "left"),
    [
        ("# neuron-migrate: noqa", []),
        ("# neuron-migrate: noqa: NM201", ["NM101"]),
        ("# ruff: noqa: NM201, E501", ["NM101"]),
        ("# ruff: noqa", ["NM101", "NM201"]),  # a bare ruff directive is ruff's, not ours
        ("x = 1  # neuron-migrate: noqa", ["NM101", "NM201"]),  # only on a line of its own
    ],
)
def test_file_level_suppression(tmp_path, directive, left):
    path = tmp_path / "f.py"
    path.write_text(
        directive + "\nimport torch_xla.core.xla_model as xm\nd = xm.xla_device()\nxm.mark_step()\n"
    )
    assert sorted({d["code"] for d in as_json(str(path))}) == left
    check("--fix", str(path))
    assert ("mark_step" in path.read_text()) == (left == [] or "NM201" not in left)


def test_file_level_suppression_in_project_files_and_notebooks(tmp_path):
    (tmp_path / "run.sh").write_text("# neuron-migrate: noqa: NM904\nexport PJRT_DEVICE=NEURON\n")
    (tmp_path / "n.ipynb").write_text(
        _notebook(
            "# neuron-migrate: noqa\n" + IMPORT,
            "xm.mark_step()\n",
            "%%bash\nexport PJRT_DEVICE=X\n",
        )
    )
    assert as_json(str(tmp_path)) == []


def test_a_noqa_naming_an_unknown_or_unused_code_is_a_warning(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("w.py")
    path.write_text(
        "import torch_xla.core.xla_model as xm\n"
        "xm.mark_step()  # noqa: NM201\n"
        "d = 1  # noqa: NM101, NM999, E501\n"
        "e = 2  # noqa: nm201\n"
    )
    result = check(str(path))
    assert result.exit_code == 0  # warnings, not findings
    assert "All checks passed!" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {path}:3: `# noqa: NM101` is unused: NM101 reports nothing here",
        f"warning: {path}:3: `# noqa: NM999` names no rule of neuron-migrate",
        f"warning: {path}:4: `# noqa: NM201` is unused: NM201 reports nothing here",
    ]
    # a rule that is off is not judged; E501 is another tool's code
    quiet = check("--ignore", "NM1", str(path))
    assert "NM101" not in quiet.stderr and "E501" not in quiet.stderr


@pytest.mark.slow
def test_the_progress_bar_advances_file_by_file_with_a_pool(tmp_path):
    import time

    from neuron_migrate.api import run
    from neuron_migrate.checkers.base import Options
    from neuron_migrate.config.settings import Settings

    body = "import torch_xla.core.xla_model as xm\n" + "xm.mark_step()\n" * 150
    for i in range(160):
        (tmp_path / f"m{i:03}.py").write_text(body)

    class Recorder:
        def __init__(self):
            self.times: list[float] = []

        def start(self, total):
            self.total = total

        def advance(self, n=1):
            assert n == 1
            self.times.append(time.monotonic())

    recorder = Recorder()
    run([tmp_path], Settings(root=tmp_path), Options(), jobs=2, progress=recorder, cache=False)
    assert recorder.total == len(recorder.times) == 160
    # files arrive one by one, not in chunks: count the bursts (advances less than 3 ms apart)
    gaps = [b - a for a, b in zip(recorder.times, recorder.times[1:])]
    bursts = 1 + sum(1 for gap in gaps if gap > 0.003)
    assert bursts >= 160 // 4, bursts
