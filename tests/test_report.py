"""`neuron-migrate report`: the migration readiness report (markdown, html, csv)."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from neuron_migrate.model import FileResult, Finding, Fix, Safety, Severity, Span
from neuron_migrate.report import csv_format, html, markdown
from neuron_migrate.report.readiness import measure
from tests.test_cli import LEGACY, invoke


def finding(path, code, severity=Severity.ERROR, safety=None, line=1) -> Finding:
    return Finding(
        path,
        code,
        f"rule-{code}",
        severity,
        f"`{code}` message",
        Span(line, 1, line, 2),
        fix=Fix(safety) if safety else None,
    )


@pytest.fixture
def measured(all_rules):
    plain = [
        FileResult(
            "a.py",
            [
                finding("a.py", "NM101", safety=Safety.SAFE, line=3),
                finding("a.py", "NM201", safety=Safety.UNSAFE, line=5),
                finding("a.py", "NM204", line=9),
            ],
        ),
        FileResult("b.py", [finding("b.py", "NM101", safety=Safety.SAFE)]),
        FileResult("c.py", []),
        FileResult("d.py", [finding("d.py", "NM205", severity=Severity.INFO)]),
    ]
    return measure(plain, tuple(all_rules))


def test_measure(measured):
    assert measured.findings == 5
    assert (measured.resolved_by_fix, measured.resolved_by_unsafe) == (2, 3)
    assert measured.files_checked == 4
    assert (measured.files_free_after_fix, measured.files_free_after_unsafe) == (3, 3)
    assert [(b.code, [f.path for f in b.files]) for b in measured.blockers] == [("NM204", ["a.py"])]
    assert measured.blockers[0].files[0].places == ["9:1"]
    rows = {r.name: r for r in measured.rules}
    assert (rows["NM101"].findings, rows["NM101"].safe) == (2, 2)
    assert (rows["NM201"].unsafe, rows["NM204"].manual) == (1, 1)
    files = {r.name: r for r in measured.files}
    assert (files["a.py"].safe, files["a.py"].unsafe, files["a.py"].manual) == (1, 1, 1)
    assert measured.headline.startswith("40% of 5 findings are resolved by `--fix` (60% with")
    assert "75% of 4 files are free of errors" in measured.headline


def test_markdown(measured):
    text = markdown.render(measured)
    assert text.startswith("# TorchNeuron migration readiness\n")
    assert "| NM101 `rule-NM101` | xla | error | 2 | 2 | 0 | 0 |" in text
    assert "| `a.py` | 3 | 1 | 1 | 1 |" in text
    assert "### NM204 `rule-NM204`: 1 in 1 file" in text
    assert "- `a.py`: 9:1" in text
    assert "What to do: " in text


def test_csv(measured):
    rows = list(csv.DictReader(io.StringIO(csv_format.render(measured))))
    sections = {r["section"] for r in rows}
    assert sections == {"total", "pack", "rule", "file", "blocker-rule", "blocker"}
    total = rows[0]
    assert (total["findings"], total["safe"], total["unsafe"], total["manual"]) == (
        "5",
        "2",
        "1",
        "2",
    )
    blocker = next(r for r in rows if r["section"] == "blocker")
    assert blocker["location"] == "a.py:9:1" and not blocker["instruction"]
    group = next(r for r in rows if r["section"] == "blocker-rule")
    assert group["name"] == "NM204" and group["instruction"]


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if name in ("src", "href") and value and "://" in value:
                raise AssertionError(f"external resource {value}")

    def handle_data(self, data):
        self.parts.append(data)


def test_html_is_self_contained(measured):
    page = html.render(measured)
    parser = _Text()
    parser.feed(page)
    assert "script" not in parser.tags and "link" not in parser.tags
    assert "svg" in parser.tags and "rect" in parser.tags
    assert not re.search(r"(?:src|href)=[\"']https?:", page)
    assert "40%" in "".join(parser.parts)


def test_report_command(tmp_path):
    (tmp_path / "train.py").write_text(LEGACY)
    (tmp_path / "clean.py").write_text("import torch\n")
    result = invoke("report", ".", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "**100% of 2 findings are resolved by `--fix`" in result.stdout
    assert "100% of 2 files are free of errors" in result.stdout
    invoke("report", "--format", "csv", "-o", "r.csv", ".", cwd=tmp_path)
    assert (tmp_path / "r.csv").read_text().startswith("section,name,")
    assert (tmp_path / "train.py").read_text() == LEGACY  # nothing written


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed")
def test_html_renders_in_headless_chromium(tmp_path):
    (tmp_path / "train.py").write_text(LEGACY)
    (tmp_path / "dist.py").write_text(
        "import torch_xla\n\n@torch_xla.compile\ndef step(x):\n    return x\n"
    )
    assert invoke("report", "--format", "html", "-o", "r.html", ".", cwd=tmp_path).exit_code == 0
    page = tmp_path / "r.html"
    common = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    proc = subprocess.run(
        [*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    parser = _Text()
    parser.feed(proc.stdout)
    text = " ".join(" ".join(parser.parts).split())
    assert "TorchNeuron migration readiness" in text
    assert "Findings per pack" in text and "xla" in text
    assert "NM101" in text and "train.py" in text
    assert re.search(r"\d+% of \d+ findings are resolved by --fix", text)
    shot = tmp_path / "r.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 10_000
