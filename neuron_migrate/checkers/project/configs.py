"""YAML, JSON and TOML configs: their lines, for rules that look for text (instance types).

No YAML or JSON parser is needed for that, and nothing else in these files is read. Comment
lines are not items, and a neuron-migrate rule file (one rule, or a pack of `[[rule]]`s), which
quotes legacy files in its examples, has none."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import Item, Line, Word
from neuron_migrate.checkers.project.core import Lines, TextEdit, apply_edits

ITEMS = frozenset({"line"})
_RULE_FILE = re.compile(r"(?m)^(\[pack\]|\[\[match\]\]|\[\[rule\]\])\s*$")


def line_items(lines: Lines) -> list[Item]:
    """Every line that is not a comment (a comment that mentions a thing is not config)."""
    items: list[Item] = []
    for number in range(1, len(lines) + 1):
        text = lines.content(number)
        if not text.lstrip().startswith("#"):
            items.append(Line(number, 1, len(text) + 1, None, text))
    return items


def read(text: str) -> list[Item]:
    if _RULE_FILE.search(text) and ("[[rule]]" in text or "[[match]]" in text):
        return []
    return line_items(Lines(text))


def text_edit(text: str, item: Item, replacement: str) -> tuple[TextEdit, str] | None:
    """The edit of a line (replaced whole; "" removes it with its line ending), or of a part
    of a line or a word of a command (`Line.part`, `Command.words`); None for other items."""
    lines = Lines(text)
    if isinstance(item, Line):
        if replacement == "":
            return lines.whole_line(item.line), replacement
        start = lines.offset(item.line)
        return TextEdit(start, start + len(lines.content(item.line)), replacement), replacement
    if type(item) in (Item, Word):
        start, end = lines.offset(item.line, item.col), lines.offset(item.line, item.end_col)
        return TextEdit(start, end, replacement), replacement
    return None


edit = text_edit


def apply(text: str, edits: list[TextEdit]) -> str:
    return apply_edits(text, edits)
