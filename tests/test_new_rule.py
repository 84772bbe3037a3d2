"""scripts/new_rule.py: the new rule's file loads, is valid under the schema, and its example
fails until the author fills it in (`pytest tests/test_rule_examples.py -k CODE`)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_migrate.api import check_text
from neuron_migrate.checkers.base import Job, Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.config.tomlread import tomllib
from neuron_migrate.engine.coderule import load_rule_module
from neuron_migrate.packs.loader import load_pack, load_rules
from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("new_rule", REPO / "scripts" / "new_rule.py")
new_rule = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(new_rule)

USED = {r.code for r in load_rules()}
CODE = next(f"NM{n}" for n in range(999, 100, -1) if f"NM{n}" not in USED)
NAME = "scaffolded-example-rule"


def _demo_pack(tmp_path: Path, code_rule: bool) -> Path:
    """A pack of its own beside copies of the built-in ones (so codes stay unique)."""
    rules = tmp_path / "rules"
    shutil.copytree(REPO / "rules", rules)
    (rules / "demo").mkdir()
    (rules / "demo" / "pack.toml").write_text('[pack]\nname = "demo"\n', encoding="utf-8")
    made = new_rule.create("demo", CODE, NAME, rules, code_rule=code_rule)
    assert [p.suffix for p in made] == ([".toml", ".py"] if code_rule else [".toml"])
    return rules / "demo"


@pytest.mark.parametrize("code_rule", [False, True], ids=["data-rule", "code-rule"])
def test_scaffold_loads_and_its_example_fails(tmp_path: Path, code_rule: bool):
    demo_pack = _demo_pack(tmp_path, code_rule)
    path = demo_pack / f"{CODE}_{NAME.replace('-', '_')}.toml"
    [rule] = load_pack(demo_pack, with_code=True)
    assert (rule.code, rule.name, rule.pack) == (CODE, NAME, "demo")
    assert rule.examples and rule.ok and rule.why and rule.fix_text
    assert (rule.module is not None) == code_rule
    if code_rule:
        assert [p.kind for p in rule.patterns] == ["code"]
        assert load_rule_module(rule.module).visitor is not None
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "rules" / "rule.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(tomllib.loads(path.read_text(encoding="utf-8")), schema)
    # what tests/test_rule_examples.py::test_example_is_reported asserts: it must fail
    # (a code rule runs from the built-in packs only, so the demo pack joins them here)
    settings = Settings(select=("ALL",), root=REPO)
    job = Job(load_rules() + tuple(load_pack(demo_pack, with_code=True)), settings, Options())
    assert CODE in {r.code for r in job.rules}
    example = rule.examples[0]
    result = check_text(example.before, "snippet.py", job)
    assert result.error is None
    assert CODE not in [f.code for f in result.findings]
    # and the rule works once its names say what the example calls
    filled = path.read_text(encoding="utf-8").replace("todo_legacy_package", "legacy_package")
    path.write_text(filled, encoding="utf-8")
    settings = Settings(select=(CODE,), root=REPO)
    job = Job(tuple(load_pack(demo_pack, with_code=True)), settings, Options())
    result = check_text(example.before, "snippet.py", job)
    assert [f.code for f in result.findings] == [CODE]


def test_scaffolded_module_is_lint_clean(tmp_path: Path):
    module = _demo_pack(tmp_path, True) / f"{CODE}_{NAME.replace('-', '_')}.py"
    for args in (["check"], ["format", "--check"]):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                *args,
                "--config",
                str(REPO / "pyproject.toml"),
                str(module),
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_scaffold_refuses_a_taken_code_or_an_unknown_pack(tmp_path: Path):
    shutil.copytree(REPO / "rules", tmp_path / "rules")
    taken = sorted(USED)[0]
    with pytest.raises(SystemExit, match="already used"):
        new_rule.create("xla", taken, "fresh-name", tmp_path / "rules")
    with pytest.raises(SystemExit, match="no pack"):
        new_rule.create("no-such-pack", CODE, NAME, tmp_path / "rules")
    with pytest.raises(SystemExit, match="kebab-case"):
        new_rule.create("xla", CODE, "Not_Kebab", tmp_path / "rules")


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--code-rule"]], ids=["data-rule", "code-rule"])
def test_rule_examples_fail_for_the_scaffolded_rule_in_a_copy(tmp_path: Path, extra: list[str]):
    """The real thing: a copy of the repository, the script, then pytest -k CODE fails."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for part in ("neuron_migrate", "rules", "tests", "scripts"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", copy)
    made = subprocess.run(
        [sys.executable, "scripts/new_rule.py", "xla", CODE, NAME, *extra],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    env = {**os.environ, "PYTHONPATH": str(copy)}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
        + ["tests/test_rule_examples.py", "-k", CODE],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    # 1: tests ran and failed (5 would mean nothing was selected: the copy was not used)
    assert tests.returncode == 1, tests.stdout[-3000:]
    assert f"test_example_is_reported[{CODE}-example1]" in tests.stdout
