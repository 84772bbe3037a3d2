"""Human output: `path:line:col: CODE [*] message`, the source line with a marker, a summary."""

from __future__ import annotations

import click

from neuron_migrate.model import Finding, Safety, Severity
from neuron_migrate.report.summary import count, plural

_SEVERITY_COLOUR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def _fixable(finding: Finding, unsafe_fixes: bool) -> bool:
    fix = finding.fix
    return fix is not None and (fix.safety is Safety.SAFE or unsafe_fixes)


def finding_line(finding: Finding, unsafe_fixes: bool, color: bool) -> str:
    where = f"{finding.location}:"
    code = finding.code
    mark = " [*]" if _fixable(finding, unsafe_fixes) else ""
    if color:
        where = click.style(where, bold=True)
        code = click.style(code, fg=_SEVERITY_COLOUR[finding.severity], bold=True)
        mark = click.style(mark, fg="cyan") if mark else ""
    return f"{where} {code}{mark} {finding.message}"


def snippet(finding: Finding, color: bool) -> list[str]:
    source = finding.source_line.rstrip("\r\n")
    if not source.strip():
        return []
    number = str(finding.span.line)
    gutter = " " * len(number)
    start = finding.span.column - 1
    if finding.span.end_line == finding.span.line:
        width = max(1, finding.span.end_column - finding.span.column)
    else:
        width = max(1, len(source) - start)
    marker = " " * start + "^" * width
    if color:
        marker = click.style(marker, fg=_SEVERITY_COLOUR[finding.severity])
    return [f"{gutter} |", f"{number} | {source.expandtabs(1)}", f"{gutter} | {marker}", ""]


def render(
    findings: list[Finding],
    *,
    unsafe_fixes: bool,
    show_source: bool = True,
    color: bool = False,
) -> str:
    out: list[str] = []
    for finding in findings:
        out.append(finding_line(finding, unsafe_fixes, color))
        if show_source:
            out.extend(snippet(finding, color))
    return "\n".join(out) + ("\n" if out else "")


def summary(
    findings: list[Finding], *, unsafe_fixes: bool, fixed: int = 0, fixing: bool = False
) -> str:
    counts = count(findings)
    lines = []
    if fixing:
        lines.append(f"Fixed {plural(fixed, 'finding')} ({counts.findings} remaining).")
    if counts.findings == 0:
        if not fixing:
            lines.append("All checks passed!")
        return "\n".join(lines) + "\n"
    lines.append(f"Found {plural(counts.findings, 'finding')} in {plural(counts.files, 'file')}.")
    fixable = counts.safe + (counts.unsafe if unsafe_fixes else 0)
    hidden = 0 if unsafe_fixes else counts.unsafe
    if fixable or hidden:
        text = f"[*] {fixable} fixable with `--fix`"
        if hidden:
            text += f" ({hidden} more with `--unsafe-fixes`)"
        lines.append(text + ".")
    manual = counts.findings - counts.safe - counts.unsafe
    if manual:
        lines.append(f"{manual} need a manual change: `neuron-migrate explain CODE` says how.")
    return "\n".join(lines) + "\n"
