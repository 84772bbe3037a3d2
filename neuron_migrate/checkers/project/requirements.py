"""requirements*.txt / constraints*.txt: one requirement a line, pip's comment rules."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import Item, Pin, parse_requirement
from neuron_migrate.checkers.project.core import Lines, TextEdit, apply_edits

ITEMS = frozenset({"pin"})
# pip: a comment starts at `#` at the start of a line or after whitespace
_COMMENT = re.compile(r"(^|\s)#.*$")


def read(text: str) -> list[Item]:
    lines = Lines(text)
    found: list[Item] = []
    for number in range(1, len(lines) + 1):
        line = lines.content(number)
        if line.rstrip().endswith("\\"):
            continue  # a continued line: left alone
        text = _COMMENT.sub("", line)
        stripped = text.strip()
        if not stripped or stripped.startswith("-"):
            continue  # blank, comment, or an option (-r, -c, -e, --index-url, ...)
        head = re.split(r"\s--?[a-z]", stripped, maxsplit=1)[0].rstrip()
        requirement = parse_requirement(head)
        if requirement is None or requirement.url:
            continue
        col = len(text) - len(text.lstrip()) + 1
        # options after the requirement (`--hash=...`): report, but never rewrite the pin
        options = head != stripped
        found.append(Pin(number, col, col + len(head), options, head, requirement))
    return found


def edit(text: str, item: Item, replacement: str) -> tuple[TextEdit, str] | None:
    if item.where:
        return None
    lines = Lines(text)
    if replacement == "":
        return lines.whole_line(item.line), replacement
    start = lines.offset(item.line, item.col)
    return TextEdit(start, start + len(item.text), replacement), replacement


def apply(text: str, edits: list[TextEdit]) -> str:
    return apply_edits(text, edits)
