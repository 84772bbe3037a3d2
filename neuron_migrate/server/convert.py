"""Findings to LSP diagnostics, and new texts to the smallest text edit."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition, ServerTextRange

from neuron_migrate.model import Finding, Severity
from neuron_migrate.packs.loader import Rule

SOURCE = "neuron-migrate"
_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def finding_range(finding: Finding, lines: list[str], codec: PositionCodec) -> lsp.Range:
    """The finding's span (1-based code points, end exclusive) in the client's units. An empty
    span (a syntax error's point) covers the character there, so editors can show it."""
    span = finding.span
    start = ServerTextPosition(span.line - 1, span.column - 1)
    end = ServerTextPosition(span.end_line - 1, span.end_column - 1)
    if end <= start:
        line = lines[start.line] if start.line < len(lines) else ""
        width = len(line.rstrip("\r\n"))
        end = ServerTextPosition(start.line, min(start.character + 1, max(width, 0)))
        if end < start:
            end = start
    return codec.range_to_client_units(lines, ServerTextRange(start, end))


def _json_range(finding: Finding, lines: list[str]) -> lsp.Range:
    """A notebook finding in the notebook's own JSON text (a notebook opened as a plain text
    document): the JSON line that holds the cell's line, else the start of the file."""
    from neuron_migrate.checkers.notebook import json_line_of

    number = json_line_of("".join(lines), finding.cell or 0, finding.span.line) or 1
    line = lines[number - 1] if number <= len(lines) else ""
    indent = len(line) - len(line.lstrip())
    end = len(line.rstrip("\r\n"))
    return lsp.Range(lsp.Position(number - 1, indent), lsp.Position(number - 1, end))


def document_range(finding: Finding, lines: list[str], codec: PositionCodec) -> lsp.Range:
    """Where a finding is in the text document it was found in: a finding in a cell (`cell`
    set) of a notebook checked as a text document lies in the notebook's JSON text."""
    if finding.cell is None:
        return finding_range(finding, lines, codec)
    return _json_range(finding, lines)


def diagnostic(
    finding: Finding, lines: list[str], codec: PositionCodec, rule: Rule | None, where=None
) -> lsp.Diagnostic:
    """The finding as an LSP diagnostic; `lines` are those of the text it was found in, `where`
    its range when already known (default: finding_range)."""
    href = rule.source if rule is not None and rule.source.startswith("http") else None
    return lsp.Diagnostic(
        range=where or finding_range(finding, lines, codec),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=lsp.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={
            "name": finding.name,
            "fix": finding.fix.safety.value if finding.fix is not None else None,
        },
    )


def _longest(same, limit: int) -> int:
    """The largest k <= limit with same(k) (same is monotone): a binary search of slice
    comparisons, fast on long texts where a character loop is not."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _trimmed(old: str, new: str) -> tuple[int, int]:
    """The lengths of the common prefix and (after it) the common suffix of two texts."""
    limit = min(len(old), len(new))
    prefix = _longest(lambda k: old[:k] == new[:k], limit)
    suffix = _longest(lambda k: old[len(old) - k :] == new[len(new) - k :], limit - prefix)
    return prefix, suffix


def text_edits(old: str, new: str, codec: PositionCodec) -> list[lsp.TextEdit]:
    """Small edits that turn `old` into `new`: one per run of changed lines, each trimmed to
    the characters that differ (so the editor keeps the cursor and the rest of the text)."""
    from difflib import SequenceMatcher

    old_lines, new_lines = lines_of(old), lines_of(new)
    edits = []
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before, after = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        prefix, suffix = _trimmed(before, after)
        start = _position(old_lines, i1, before, prefix)
        end = _position(old_lines, i1, before, len(before) - suffix)
        edits.append(
            lsp.TextEdit(
                range=codec.range_to_client_units(old_lines, ServerTextRange(start, end)),
                new_text=after[prefix : len(after) - suffix],
            )
        )
    return edits


def _position(lines: list[str], first: int, chunk: str, offset: int) -> ServerTextPosition:
    """The position of `offset` in `chunk`, the text of lines[first:...]."""
    line = first + chunk.count("\n", 0, offset)
    start = chunk.rfind("\n", 0, offset) + 1
    # past the last line (the codec makes that the end of the text)
    return ServerTextPosition(line, offset - start)


def contains(rng: lsp.Range, position: lsp.Position) -> bool:
    start = (rng.start.line, rng.start.character)
    end = (rng.end.line, rng.end.character)
    return start <= (position.line, position.character) <= end


def overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)
