"""setup.cfg: `[options] install_requires` / `python_requires` and
`[options.extras_require]`. Values are read with configparser; the lines of each requirement are
found by walking the same INI structure (configparser keeps no positions)."""

from __future__ import annotations

import configparser
import re

from neuron_migrate.checkers.project import deps
from neuron_migrate.checkers.project.core import (
    Hit,
    Lines,
    ProjectParseError,
    TextEdit,
    apply_edits,
)

TRIGGER = re.compile(rb"(?i)torch|neuron|xla")
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


def analyze(text: str) -> list[Hit]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ProjectParseError(f"not a valid setup.cfg: {exc.message}") from None
    lines = Lines(text)
    found: list[deps.Dep] = []
    python = None
    for section, key, number, col, value in _entries(lines):
        if (
            section == "options"
            and key == "install_requires"
            or section == ("options.extras_require")
        ):
            requirement = deps.parse(value)
            if requirement is not None and not requirement.url:
                found.append(deps.Dep(value, number, col, requirement))
        elif section == "options" and key == "python_requires":
            python = (value, number, col)
    hits = deps.check(found)
    if python and deps.neuron_project(found) and deps.old_python(python[0]):
        value, number, col = python
        start = lines.offset(number, col)
        hits.append(
            deps.python_hit(
                value,
                number,
                col,
                col + len(value),
                TextEdit(start, start + len(value), deps.PYTHON_FIX),
            )
        )
    for hit in hits:
        dep = hit.edit
        if isinstance(dep, deps.Dep):
            if hit.replacement == "" and lines.content(dep.line)[:1] in " \t":
                hit.edit = lines.whole_line(dep.line)
            elif hit.replacement == "":
                hit.edit = hit.safety = hit.replacement = None  # `key = value` line: by hand
            else:
                start = lines.offset(dep.line, dep.col)
                hit.edit = TextEdit(start, start + len(dep.text), hit.replacement)
    return hits


def apply(text: str, hits: list[Hit]) -> str:
    return apply_edits(text, [h.edit for h in hits])
