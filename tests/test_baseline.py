"""Gradual adoption: --write-baseline / --baseline, and --add-noqa."""

from __future__ import annotations

import json
from pathlib import Path

from neuron_migrate.adoption.addnoqa import add_noqa_text
from neuron_migrate.model import Finding, Severity, Span
from tests.test_cli import LEGACY, invoke


def test_baseline_reports_only_new_findings(tmp_path):
    (tmp_path / "train.py").write_text(LEGACY)
    result = invoke("check", "--write-baseline", "nm-baseline.json", ".", cwd=tmp_path)
    assert result.exit_code == 0
    data = json.loads((tmp_path / "nm-baseline.json").read_text())
    assert {(e["path"], e["code"], e["line"]) for e in data["findings"]} == {
        ("train.py", "NM101", "device = xm.xla_device()"),
        ("train.py", "NM201", "xm.mark_step() # cut the graph"),
    }
    clean = invoke("check", "--baseline", "nm-baseline.json", ".", cwd=tmp_path)
    assert clean.exit_code == 0, clean.output
    assert "All checks passed!" in clean.stdout
    # unrelated edits shift the lines and change spacing: still matched
    shifted = "# a new header\n\n\n" + LEGACY.replace("xm.mark_step()  #", "xm.mark_step()      #")
    shifted = shifted.replace("for step in range(3):", "for step in range(3):  # loop")
    (tmp_path / "train.py").write_text(shifted)
    assert invoke("check", "--baseline", "nm-baseline.json", ".", cwd=tmp_path).exit_code == 0
    # a new finding is reported and fails
    (tmp_path / "train.py").write_text(shifted + "xm.mark_step()\n")
    new = invoke("check", "--baseline", "nm-baseline.json", "--format", "json", ".", cwd=tmp_path)
    assert new.exit_code == 1
    assert [(d["code"], d["line"]) for d in json.loads(new.stdout)] == [("NM201", 11)]


def test_baseline_counts_repeated_lines(tmp_path):
    (tmp_path / "a.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    invoke("check", "--write-baseline", "b.json", ".", cwd=tmp_path)
    (tmp_path / "a.py").write_text(
        "import torch_xla.core.xla_model as xm\nxm.mark_step()\nxm.mark_step()\n"
    )
    data = json.loads(
        invoke("check", "--baseline", "b.json", "--format", "json", ".", cwd=tmp_path).stdout
    )
    assert len(data) == 1 and data[0]["code"] == "NM201"


def test_baseline_paths_are_relative_to_the_baseline_file(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "t.py").write_text(LEGACY)
    invoke("check", "--write-baseline", "ci/base.json", "src", cwd=tmp_path)
    assert json.loads((tmp_path / "ci" / "base.json").read_text())["findings"][0]["path"] == (
        "../src/t.py"
    )
    # run from another folder: still matched
    assert (
        invoke("check", "--baseline", "../ci/base.json", ".", cwd=tmp_path / "src").exit_code == 0
    )


def test_bad_baseline_is_exit_2(tmp_path):
    (tmp_path / "a.py").write_text(LEGACY)
    assert invoke("check", "--baseline", "missing.json", ".", cwd=tmp_path).exit_code == 2
    (tmp_path / "bad.json").write_text("{nope")
    result = invoke("check", "--baseline", "bad.json", ".", cwd=tmp_path)
    assert result.exit_code == 2 and "not a baseline" in result.output


def _finding(line: int, code: str = "NM201") -> Finding:
    return Finding("x.py", code, "n", Severity.ERROR, "m", Span(line, 1, line, 5))


def test_add_noqa_text_merges_and_is_idempotent():
    text = "a()\nb()  # noqa: NM101\nc()  # keep me\nd()  # noqa\n"
    found = [_finding(1), _finding(2), _finding(3), _finding(3, "NM101"), _finding(4)]
    new, added = add_noqa_text(text, found)
    assert new == (
        "a()  # noqa: NM201\nb()  # noqa: NM101, NM201\nc()  # keep me  # noqa: NM201, NM101\n"
        "d()  # noqa\n"
    )
    assert added == 4
    assert add_noqa_text(new, found) == (new, 0)


def test_add_noqa_skips_lines_inside_strings():
    text = 'x = f("""\nxm.mark_step()\n""")\n'
    finding = Finding("x.py", "NM201", "n", Severity.ERROR, "m", Span(1, 5, 3, 4))
    new, added = add_noqa_text(text, [finding])
    assert new == 'x = f("""\nxm.mark_step()\n""")  # noqa: NM201\n' and added == 1


def test_add_noqa_command(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(LEGACY.replace("\n", "\r\n").encode())
    result = invoke("check", "--add-noqa", ".", cwd=tmp_path)
    assert result.exit_code == 0 and "Added 2 noqa directives." in result.output
    text = path.read_bytes().decode()
    assert "device = xm.xla_device()  # noqa: NM101\r\n" in text
    assert "xm.mark_step()  # cut the graph  # noqa: NM201\r\n" in text
    assert invoke("check", ".", cwd=tmp_path).exit_code == 0
    before = path.read_bytes()
    assert "Added 0 noqa directives." in invoke("check", "--add-noqa", ".", cwd=tmp_path).output
    assert path.read_bytes() == before


def test_add_noqa_only_for_findings_not_in_baseline(tmp_path: Path):
    path = tmp_path / "t.py"
    path.write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    invoke("check", "--write-baseline", "b.json", ".", cwd=tmp_path)
    path.write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\nd = xm.xla_device()\n")
    invoke("check", "--baseline", "b.json", "--add-noqa", ".", cwd=tmp_path)
    assert path.read_text().splitlines()[1:] == [
        "xm.mark_step()",
        "d = xm.xla_device()  # noqa: NM101",
    ]
