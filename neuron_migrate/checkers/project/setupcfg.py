"""setup.cfg: `[options] install_requires` / `python_requires` and
`[options.extras_require]`. Values are read with configparser; the lines of each requirement are
found by walking the same INI structure (configparser keeps no positions)."""

from __future__ import annotations

import configparser
import re

from neuron_migrate.checkers.project.api import Item, Pin, PythonRequires, parse_requirement
from neuron_migrate.checkers.project.core import Lines, ProjectParseError, TextEdit, apply_edits

ITEMS = frozenset({"pin", "python-requires"})
_SECTION = re.compile(r"^\[([^\]]+)\]")
_KEY = re.compile(r"^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$")
_COMMENT = re.compile(r"(^|\s)#.*$")


def _entries(lines: Lines):
    """(section, key, line number, column, text) for every non-empty value line."""
    section = key = None
    for number in range(1, len(lines) + 1):
        raw = lines.content(number)
        if not raw.strip() or raw.lstrip().startswith(("#", ";")):
            continue
        header = _SECTION.match(raw)
        if header:
            section, key = header.group(1).strip(), None
            continue
        if raw[0] in " \t" and key is not None:
            text = raw
        else:
            found = _KEY.match(raw)
            if not found:
                continue
            key = found.group(1)
            text = " " * found.start(2) + found.group(2)
        value = _COMMENT.sub("", text)
        if value.strip():
            col = len(value) - len(value.lstrip()) + 1
            yield section, key, number, col, value.strip()


def read(text: str) -> list[Item]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ProjectParseError(f"not a valid setup.cfg: {exc.message}") from None
    found: list[Item] = []
    for section, key, number, col, value in _entries(Lines(text)):
        if (
            section == "options"
            and key == "install_requires"
            or section == ("options.extras_require")
        ):
            requirement = parse_requirement(value)
            if requirement is not None and not requirement.url:
                found.append(Pin(number, col, col + len(value), None, value, requirement))
        elif section == "options" and key == "python_requires":
            found.append(PythonRequires(number, col, col + len(value), None, value, value))
    return found


def edit(text: str, item: Item, replacement: str) -> tuple[TextEdit, str] | None:
    lines = Lines(text)
    start = lines.offset(item.line, item.col)
    if replacement != "":
        return TextEdit(start, start + item.end_col - item.col, replacement), replacement
    if lines.content(item.line)[:1] in " \t":
        return lines.whole_line(item.line), replacement
    return None  # the requirement on the `key = value` line: by hand


def apply(text: str, edits: list[TextEdit]) -> str:
    return apply_edits(text, edits)
