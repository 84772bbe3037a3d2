"""`--format sarif`: SARIF 2.1.0 with rule metadata, help URIs and, for fixable findings, the fix
as SARIF `fixes` (replacements by character offset), which ruff's SARIF lacks.

The replacements come from the real fixed text of each file (`compute_fixes`), split into
hunks; each hunk goes to the finding whose lines it changes, and a hunk that changes no
reported line (an import added by the fixes) goes to the file's first fixable finding. So
applying every result's fix gives exactly what `--fix --unsafe-fixes` writes.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from neuron_migrate import __version__
from neuron_migrate.model import Finding, Severity
from neuron_migrate.packs import docs
from neuron_migrate.packs.docs import ExampleRun
from neuron_migrate.packs.loader import Rule

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@dataclass(frozen=True)
class Hunk:
    """Replace `length` characters at `offset` (code points) of the original by `text`; the
    original lines first_line..last_line (1-based) are the ones it touches (an insertion
    before line n has first_line = n, last_line = n - 1)."""

    offset: int
    length: int
    text: str
    first_line: int
    last_line: int


def hunks(original: str, fixed: str) -> list[Hunk]:
    old = original.splitlines(keepends=True)
    new = fixed.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    out = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.append(
            Hunk(
                offset=starts[i1],
                length=starts[i2] - starts[i1],
                text="".join(new[j1:j2]),
                first_line=i1 + 1,
                last_line=i2,
            )
        )
    return out


def apply(original: str, replacements: list[Hunk]) -> str:
    """The text with the hunks applied (for tests and tools)."""
    text = original
    for hunk in sorted(replacements, key=lambda h: h.offset, reverse=True):
        text = text[: hunk.offset] + hunk.text + text[hunk.offset + hunk.length :]
    return text


def _touches(hunk: Hunk, finding: Finding) -> bool:
    first, last = finding.span.line, finding.span.end_line
    if hunk.length == 0:  # insertion between last_line and first_line
        return hunk.last_line in (first - 1, last)
    return hunk.first_line <= last and first <= hunk.last_line


def assign(findings: list[Finding], fixes: dict[str, tuple[str, str]]) -> dict[int, list[Hunk]]:
    """id(finding) -> the hunks that are its fix."""
    out: dict[int, list[Hunk]] = {}
    for path, (original, fixed) in fixes.items():
        fixable = [f for f in findings if f.path == path and f.fix is not None and f.cell is None]
        if not fixable or original == fixed:
            continue
        for hunk in hunks(original, fixed):
            owner = next((f for f in fixable if _touches(hunk, f)), fixable[0])
            out.setdefault(id(owner), []).append(hunk)
    return out


def _uri(path: str) -> str:
    return quote(Path(path).as_posix())


def _rule_entry(rule: Rule, runs: tuple[ExampleRun, ...]) -> dict:
    """The rule's metadata: its short description is the message `check` prints for the rule's
    first example, its help the `explain` page (every example with what `check` prints)."""
    short = docs.first_message(rule, runs)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": rule.why.strip() or short},
        "help": {
            "text": short + "\n\n" + (rule.fix_text.strip() or rule.why.strip()),
            "markdown": docs.explain(rule, runs),
        },
        "helpUri": rule.source,
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"pack": rule.pack, "fix": rule.fix_safety, "tags": [rule.pack]},
    }


def _region(finding: Finding) -> dict:
    span = finding.span
    return {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": max(span.end_column, 1),
    }


def _result(finding: Finding, index: dict[str, int], fix: list[Hunk] | None) -> dict:
    message = finding.message
    location: dict = {"artifactLocation": {"uri": _uri(finding.path), "uriBaseId": "%SRCROOT%"}}
    properties: dict = {}
    if finding.cell is None:
        location["region"] = _region(finding)
    else:
        message = f"cell {finding.cell}, line {finding.span.line}: {message}"
        properties.update(cell=finding.cell, line=finding.span.line, column=finding.span.column)
    result: dict = {
        "ruleId": finding.code,
        "level": _LEVEL[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": location}],
    }
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    if finding.fix is not None:
        properties["fixSafety"] = finding.fix.safety.value
    if fix:
        result["fixes"] = [
            {
                "description": {
                    "text": f"{finding.fix.safety.value} fix of {finding.code}"
                    + (" (needs review)" if finding.fix.safety.value == "unsafe" else "")
                },
                "artifactChanges": [
                    {
                        "artifactLocation": {
                            "uri": _uri(finding.path),
                            "uriBaseId": "%SRCROOT%",
                        },
                        "replacements": [
                            {
                                "deletedRegion": {"charOffset": h.offset, "charLength": h.length},
                                "insertedContent": {"text": h.text},
                            }
                            for h in fix
                        ],
                    }
                ],
            }
        ]
    if properties:
        result["properties"] = properties
    return result


def document(
    findings: list[Finding],
    rules: tuple[Rule, ...],
    fixes: dict[str, tuple[str, str]] | None = None,
    examples: Mapping[str, tuple[ExampleRun, ...]] | None = None,
) -> dict:
    """`examples`: what `check` prints for each rule's examples (neuron_migrate.api.example_runs),
    for the rules' descriptions; without it they fall back to the rule's `why` text."""
    examples = examples or {}
    wanted = {f.code for f in findings}
    listed = [r for r in rules if r.code in wanted] + [r for r in rules if r.code not in wanted]
    listed.sort(key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(listed)}
    owned = assign(findings, fixes or {})
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "neuron-migrate",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule_entry(r, examples.get(r.code, ())) for r in listed],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index, owned.get(id(f))) for f in findings],
            }
        ],
    }


def render(
    findings: list[Finding],
    rules: tuple[Rule, ...],
    fixes: dict[str, tuple[str, str]] | None = None,
    examples: Mapping[str, tuple[ExampleRun, ...]] | None = None,
) -> str:
    text = json.dumps(document(findings, rules, fixes, examples), indent=2, ensure_ascii=False)
    return text + "\n"


def _read(path: str) -> str | None:
    from neuron_migrate.checkers.textio import DecodeProblem, decode

    try:
        return decode(Path(path).read_bytes()).text
    except (OSError, DecodeProblem):
        return None


def compute_fixes(files, settings) -> dict[str, tuple[str, str]]:
    """path -> (current text, text with every safe and unsafe fix applied), for the files with
    a fixable finding. Nothing is written."""
    from neuron_migrate.api import run_source
    from neuron_migrate.checkers.base import Options

    options = Options(diff=True, unsafe_fixes=True)
    out: dict[str, tuple[str, str]] = {}
    for file in files:
        if not any(f.fix is not None and f.cell is None for f in file.findings):
            continue
        current = file.fixed_source if file.written else file.original_source
        if current is None:
            current = _read(file.path)  # a result served from the cache carries no text
        if current is None:
            continue
        preview = run_source(current, file.path, settings, options)
        if preview.fixed_source is not None and not preview.error:
            out[file.path] = (current, preview.fixed_source)
    return out
