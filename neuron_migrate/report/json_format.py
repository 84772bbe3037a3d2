"""`--format json`: an array of findings with 1-based positions and the fix, if any (`cell`:
the notebook cell, 1-based, whose lines the positions count; null outside notebooks)."""

from __future__ import annotations

import json

from neuron_migrate.model import Finding


def finding_dict(finding: Finding, sources: dict[str, str]) -> dict:
    fix = None
    if finding.fix is not None:
        fix = {"safety": finding.fix.safety.value, "replacement": finding.fix.replacement}
    return {
        "path": finding.path,
        "cell": finding.cell,
        "line": finding.span.line,
        "column": finding.span.column,
        "end_line": finding.span.end_line,
        "end_column": finding.span.end_column,
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "fix": fix,
        "url": sources.get(finding.code),
    }


def render(findings: list[Finding], sources: dict[str, str]) -> str:
    return json.dumps([finding_dict(f, sources) for f in findings], indent=2) + "\n"
