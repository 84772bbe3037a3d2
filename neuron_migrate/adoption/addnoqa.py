"""`--add-noqa`: append `# noqa: CODE` to each reported line (ruff's habit), idempotently.

A line that already has a `# noqa: ...` gets the new codes added to it; a bare `# noqa` or a
noqa that covers the code already is left alone. A comment can only go where a line ends
outside a string: a finding whose lines all end inside a string or a backslash continuation
is skipped. Notebooks are left alone (their cells are JSON strings).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from pathlib import Path

from neuron_migrate.checkers.textio import DecodeProblem, decode, write_atomic
from neuron_migrate.engine.noqa import suppresses
from neuron_migrate.model import Finding

_NOQA_CODES = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.I)


def _comment_lines(text: str) -> tuple[set[int], dict[int, tuple[int, str]]]:
    """Lines where a comment may be appended, and the comment already on a line (column, text)."""
    ends: set[int] = set()
    comments: dict[int, tuple[int, str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL):
                ends.add(tok.start[0])
            elif tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = (tok.start[1], tok.string)
                ends.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return ends, comments


def _add_to_line(line: str, codes: list[str], comment: tuple[int, str] | None) -> str:
    body = line.rstrip("\r\n")
    newline = line[len(body) :]
    if comment is not None:
        found = _NOQA_CODES.search(comment[1])
        if found:
            have = [c for c in re.split(r"[,\s]+", found.group("codes")) if c]
            merged = ", ".join(have + [c for c in codes if c not in have])
            start = body.index(comment[1], comment[0]) if comment[1] in body else comment[0]
            piece = comment[1][: found.start("codes")] + merged + comment[1][found.end("codes") :]
            return body[:start] + piece + body[start + len(comment[1]) :] + newline
    return f"{body.rstrip()}  # noqa: {', '.join(codes)}{newline}"


def add_noqa_text(text: str, findings: list[Finding]) -> tuple[str, int]:
    """The text with noqa comments for the findings, and how many codes were added."""
    lines = text.splitlines(keepends=True)
    ends, comments = _comment_lines(text)
    wanted: dict[int, list[str]] = defaultdict(list)
    for finding in findings:
        first, last = finding.span.line, finding.span.end_line
        if any(suppresses(lines[n - 1], finding.code) for n in {first, last} if n <= len(lines)):
            continue
        target = next((n for n in (first, last) if n in ends and n <= len(lines)), None)
        if target is not None and finding.code not in wanted[target]:
            wanted[target].append(finding.code)
    added = 0
    for number, codes in wanted.items():
        codes = [c for c in codes if not suppresses(lines[number - 1], c)]
        if codes:
            lines[number - 1] = _add_to_line(lines[number - 1], codes, comments.get(number))
            added += len(codes)
    return "".join(lines), added


def add_noqa(findings: list[Finding]) -> tuple[int, list[str]]:
    """Add noqa comments to the files of the findings; returns the count and the problems."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.cell is None and finding.code != "NM000":
            by_path[finding.path].append(finding)
    total, problems = 0, []
    for path_text, items in sorted(by_path.items()):
        path = Path(path_text)
        try:
            data = path.read_bytes()
            decoded = decode(data)
        except (OSError, DecodeProblem) as exc:
            problems.append(f"{path_text}: noqa not added: {exc}")
            continue
        new_text, added = add_noqa_text(decoded.text, items)
        if added:
            try:
                write_atomic(path, new_text.encode(decoded.encoding), data)
            except (OSError, UnicodeEncodeError) as exc:
                problems.append(f"{path_text}: noqa not added: {exc}")
                continue
            total += added
    return total, problems
