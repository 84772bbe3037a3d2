"""Output formats: concise, full, json-lines, github, junit, sarif; --output, --statistics."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from neuron_migrate.report import sarif
from tests.conftest import REPO
from tests.test_cli import LEGACY, invoke

SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"

UNSAFE = """\
import torch
import torch_xla.core.xla_model as xm

dev = xm.xla_device(1)
model = torch.nn.Linear(2, 2).to(dev)
xm.mark_step()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(LEGACY)
    (tmp_path / "clean.py").write_text("import torch\nprint(torch.ones(1))\n")
    (tmp_path / "unsafe.py").write_text(UNSAFE)
    return tmp_path


def test_concise_has_no_source(project):
    out = invoke("check", "--format", "concise", "train.py", cwd=project).output
    assert "train.py:4:10: NM101 [*]" in out
    assert " | " not in out
    assert "Found 2 findings" in out


def test_full_is_text_with_source(project):
    full = invoke("check", "--format", "full", "train.py", cwd=project).output
    assert full == invoke("check", "train.py", cwd=project).output
    assert "4 | device = xm.xla_device()" in full


def test_json_lines(project):
    result = invoke("check", "--format", "json-lines", "train.py", cwd=project)
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["code"] for r in rows] == ["NM101", "NM201"]
    assert rows[0]["line"] == 4 and rows[0]["cell"] is None
    assert result.exit_code == 1


def test_github_annotations(project):
    out = invoke("check", "--format", "github", "train.py", cwd=project).output
    lines = out.splitlines()
    assert lines[0].startswith(
        "::error file=train.py,line=4,col=10,endLine=4,endColumn=25,title=NM101 xla-device::NM101 "
    )
    assert all(line.startswith("::") for line in lines)  # nothing else on stdout


def test_github_escapes():
    from neuron_migrate.model import Finding, Severity, Span
    from neuron_migrate.report import github

    finding = Finding("a,b:c.py", "NM1", "x", Severity.WARNING, "50%\nnext", Span(1, 1, 1, 2))
    assert github.annotation(finding) == (
        "::warning file=a%2Cb%3Ac.py,line=1,col=1,endLine=1,endColumn=2,title=NM1 x::NM1 50%25%0Anext"
    )


def test_junit(project):
    out = invoke("check", "--format", "junit", ".", cwd=project).output
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"clean.py", "train.py", "unsafe.py"}
    assert suites["clean.py"].get("failures") == "0"
    train = suites["train.py"]
    failures = [c.find("failure") for c in train.iter("testcase")]
    assert len(failures) == 2 and all(f is not None for f in failures)
    assert "train.py:4:10: NM101" in failures[0].text
    assert int(root.get("failures")) == len(list(root.iter("failure")))


def test_output_file_and_nothing_on_stdout(project, tmp_path):
    target = tmp_path / "reports" / "nm.json"
    result = invoke("check", "--format", "json", "--output", str(target), ".", cwd=project)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert {d["path"] for d in json.loads(target.read_text())} == {"train.py", "unsafe.py"}


@pytest.mark.slow
def test_machine_formats_never_mix_with_human_text(project):
    for fmt in ("json", "json-lines", "github", "junit", "sarif"):
        proc = subprocess.run(
            [sys.executable, "-m", "neuron_migrate", "check", "--format", fmt, "--fix", "."],
            cwd=project,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1, proc.stderr
        assert "Found" not in proc.stdout and "Fixed" not in proc.stdout
        assert "Fixed" in proc.stderr
        if fmt in ("json", "sarif"):
            json.loads(proc.stdout)
        (project / "train.py").write_text(LEGACY)
        (project / "unsafe.py").write_text(UNSAFE)


def test_diff_with_machine_format_prints_diffs_only(project):
    result = invoke("check", "--diff", "--format", "json", "train.py", cwd=project)
    assert result.stdout.startswith("--- train.py\n+++ train.py\n")
    assert result.exit_code == 1


def test_statistics(project):
    result = invoke("check", "--statistics", ".", cwd=project)
    lines = result.stdout.splitlines()
    rows = [line.split("\t") for line in lines if "\t" in line]
    by_code = {r[1]: r for r in rows}
    assert by_code["NM201"][0] == "2" and "(2 fixable)" in by_code["NM201"][2]
    assert "NM101" in by_code
    assert result.exit_code == 1
    data = json.loads(invoke("check", "--statistics", "--format", "json", ".", cwd=project).output)
    nm101 = next(d for d in data if d["code"] == "NM101")
    assert nm101["count"] == 2 and nm101["safe"] == 1 and nm101["unsafe"] == 1
    assert nm101["fixable"] == 1
    data = json.loads(
        invoke(
            "check", "--statistics", "--unsafe-fixes", "--format", "json", ".", cwd=project
        ).output
    )
    assert next(d for d in data if d["code"] == "NM101")["fixable"] == 2


def _sarif(project) -> dict:
    result = invoke("check", "--format", "sarif", ".", cwd=project)
    assert result.exit_code == 1
    return json.loads(result.stdout)


def test_sarif_validates_against_the_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = _sarif(project)
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=str)
    assert not errors, errors[0]
    assert doc["version"] == "2.1.0"


def test_sarif_rules_and_results(project, all_rules):
    run = _sarif(project)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {r.code for r in all_rules}
    nm101 = next(r for r in rules if r["id"] == "NM101")
    assert nm101["helpUri"].startswith("https://")
    assert nm101["name"] == "xla-device" and nm101["help"]["markdown"]
    assert nm101["defaultConfiguration"]["level"] == "error"
    results = run["results"]
    first = next(r for r in results if r["ruleId"] == "NM101")
    assert rules[first["ruleIndex"]]["id"] == "NM101"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] in (
        "train.py",
        "unsafe.py",
    )
    assert region["startLine"] == 4 and region["startColumn"] == 10


def test_sarif_fixes_apply_to_the_fixed_file(project):
    """Applying every result's replacements gives exactly what --fix --unsafe-fixes writes."""
    run = _sarif(project)["runs"][0]
    originals = {p: (project / p).read_text() for p in ("train.py", "unsafe.py")}
    by_file: dict[str, list[sarif.Hunk]] = {}
    fixed_results = 0
    for result in run["results"]:
        for fix in result.get("fixes", []):
            fixed_results += 1
            for change in fix["artifactChanges"]:
                uri = change["artifactLocation"]["uri"]
                for rep in change["replacements"]:
                    region = rep["deletedRegion"]
                    by_file.setdefault(uri, []).append(
                        sarif.Hunk(
                            region["charOffset"],
                            region["charLength"],
                            rep["insertedContent"]["text"],
                            0,
                            0,
                        )
                    )
    assert fixed_results >= 3
    unsafe = [r for r in run["results"] if r.get("properties", {}).get("fixSafety") == "unsafe"]
    assert unsafe and all("fixes" in r for r in unsafe)
    invoke("check", "--fix", "--unsafe-fixes", ".", cwd=project)
    for name, original in originals.items():
        assert sarif.apply(original, by_file[name]) == (project / name).read_text()


def test_sarif_hunks_roundtrip():
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc\nx\nd\n"
    assert sarif.apply(old, sarif.hunks(old, new)) == new
