"""requirements*.txt / constraints*.txt: one requirement a line, pip's comment rules."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project import deps
from neuron_migrate.checkers.project.core import Hit, Lines, TextEdit, apply_edits

# pip: a comment starts at `#` at the start of a line or after whitespace
_COMMENT = re.compile(r"(^|\s)#.*$")
TRIGGER = re.compile(rb"(?i)torch|neuron|xla")


def requirement_deps(lines: Lines) -> list[deps.Dep]:
    found = []
    for number in range(1, len(lines) + 1):
        line = lines.content(number)
        if line.rstrip().endswith("\\"):
            continue  # a continued line: left alone
        text = _COMMENT.sub("", line)
        stripped = text.strip()
        if not stripped or stripped.startswith("-"):
            continue  # blank, comment, or an option (-r, -c, -e, --index-url, ...)
        head = re.split(r"\s--?[a-z]", stripped, maxsplit=1)[0].rstrip()
        requirement = deps.parse(head)
        if requirement is None or requirement.url:
            continue
        col = len(text) - len(text.lstrip()) + 1
        dep = deps.Dep(head, number, col, requirement)
        # options after the requirement (`--hash=...`): report, but never rewrite the pin
        dep.where = head != stripped
        found.append(dep)
    return found


def analyze(text: str) -> list[Hit]:
    lines = Lines(text)
    hits = deps.check(requirement_deps(lines))
    for hit in hits:
        if hit.edit is not None and hit.edit.where:
            hit.edit = hit.safety = hit.replacement = None
    return hits


def apply(text: str, hits: list[Hit]) -> str:
    lines = Lines(text)
    edits = []
    for hit in hits:
        dep = hit.edit
        if hit.replacement == "":
            edits.append(lines.whole_line(dep.line))
        else:
            start = lines.offset(dep.line, dep.col)
            edits.append(TextEdit(start, start + len(dep.text), hit.replacement))
    return apply_edits(text, edits)
