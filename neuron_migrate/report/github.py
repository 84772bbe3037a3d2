"""`--format github`: GitHub Actions workflow commands, which annotate the pull request's diff.

`::error file=train.py,line=4,col=10,endLine=4,endColumn=25,title=NM101::message`
(warnings become `::warning`, info `::notice`). A notebook finding has no line of the file to
point at (its line is in a cell), so it annotates the file and says the cell in the message.
"""

from __future__ import annotations

from neuron_migrate.model import Finding, Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    props = [f"file={_property(finding.path)}"]
    message = f"{finding.code} {finding.message}"
    if finding.cell is None:
        span = finding.span
        props += [f"line={span.line}", f"col={span.column}"]
        props += [f"endLine={span.end_line}", f"endColumn={span.end_column}"]
    else:
        message = f"cell {finding.cell}, line {finding.span.line}: {message}"
    props.append(f"title={_property(f'{finding.code} {finding.name}'.strip())}")
    return f"::{_COMMAND[finding.severity]} {','.join(props)}::{_data(message)}"


def render(findings: list[Finding]) -> str:
    return "".join(annotation(f) + "\n" for f in findings)
