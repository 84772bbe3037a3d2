"""requirements*.txt / constraints*.txt: one requirement a line, pip's comment rules."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import Item, Option, Pin, parse_requirement
from neuron_migrate.checkers.project.core import Lines, TextEdit, apply_edits
from neuron_migrate.checkers.project.pins import PIP_VALUE_OPTIONS

ITEMS = frozenset({"pin", "option"})
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
        if not stripped:
            continue  # blank or comment
        if stripped.startswith("-"):
            found.append(_option(lines, number, text))
            continue
        head = re.split(r"\s--?[a-z]", stripped, maxsplit=1)[0].rstrip()
        requirement = parse_requirement(head)
        if requirement is None or requirement.url:
            continue
        col = len(text) - len(text.lstrip()) + 1
        # options after the requirement (`--hash=...`): report, but never rewrite the pin
        options = head != stripped
        found.append(Pin(number, col, col + len(head), options, head, requirement))
    return found


def _option(lines: Lines, number: int, text: str) -> Option:
    """`--index-url URL`, `-i URL`, `--index-url=URL`, `--pre`; removable as its line when it
    is all the line holds."""
    words = text.split()
    name, equals, inline = words[0].partition("=")
    takes_value = not equals and name in PIP_VALUE_OPTIONS and len(words) > 1
    value = inline if equals else words[1] if takes_value else ""
    used = 2 if takes_value else 1
    col = len(text) - len(text.lstrip()) + 1
    end = text.index(words[used - 1], col - 1 + len(words[0]) if used == 2 else col - 1)
    end_col = end + len(words[used - 1]) + 1
    alone = len(words) == used
    return Option(number, col, end_col, lines.whole_line(number) if alone else None, name, value)


def edit(text: str, item: Item, replacement: str) -> tuple[TextEdit, str] | None:
    if isinstance(item, Option):
        return (item.where, replacement) if item.where is not None and replacement == "" else None
    if item.where:
        return None
    lines = Lines(text)
    if replacement == "":
        return lines.whole_line(item.line), replacement
    start = lines.offset(item.line, item.col)
    return TextEdit(start, start + len(item.text), replacement), replacement


def apply(text: str, edits: list[TextEdit]) -> str:
    return apply_edits(text, edits)
