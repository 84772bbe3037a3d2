"""pyproject.toml: PEP 621 `dependencies`, `optional-dependencies` and `requires-python`, and
Poetry's `[tool.poetry.dependencies]` (and groups). Read with tomllib, edited with tomlkit so
comments and formatting stay; and its lines, for rules that look for text."""

from __future__ import annotations

import re

from packaging.requirements import Requirement

from neuron_migrate.checkers.project.api import Item, Pin, PythonRequires, parse_requirement
from neuron_migrate.checkers.project.configs import line_items, text_edit
from neuron_migrate.checkers.project.core import Lines, ProjectParseError, TextEdit, apply_edits
from neuron_migrate.checkers.project.pins import split_marker
from neuron_migrate.config.tomlread import tomllib

ITEMS = frozenset({"pin", "python-requires", "line"})
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _tables(lines: Lines) -> list[tuple[str, int]]:
    """(dotted table name, line) for every table header, in order."""
    out = [("", 1)]
    for number in range(1, len(lines) + 1):
        found = _HEADER.match(lines.content(number))
        if found:
            name = ".".join(p.strip().strip("\"'") for p in found.group(1).split("."))
            out.append((name, number))
    return out


class _Locator:
    """Finds the line and column of a value inside the text; tomlkit keeps no positions."""

    def __init__(self, lines: Lines):
        self.lines = lines
        self.tables = _tables(lines)

    def _table_range(self, table: str) -> tuple[int, int]:
        for index, (name, number) in enumerate(self.tables):
            if name == table:
                end = (
                    self.tables[index + 1][1]
                    if index + 1 < len(self.tables)
                    else len(self.lines) + 1
                )
                return number, end
        return 1, len(self.lines) + 1

    def key_line(self, table: str, key: str) -> int | None:
        start, end = self._table_range(table)
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for number in range(start, end):
            if pattern.match(self.lines.content(number)):
                return number
        return None

    def string(self, value: str, start: int) -> tuple[int, int] | None:
        """The first line at or after `start` with `value` quoted: (line, column of value)."""
        for number in range(start, len(self.lines) + 1):
            text = self.lines.content(number)
            for quote in ('"', "'"):
                index = text.find(f"{quote}{value}{quote}")
                if index != -1:
                    return number, index + 2
        return None


def _poetry_specifier(constraint: str) -> str:
    """A Poetry constraint (`^2.1`, `~2.1.2`, `2.1.0`, `*`, `>=2,<3`) as a PEP 440 specifier."""
    constraint = constraint.strip()
    if constraint in ("", "*"):
        return ""
    parts = []
    for piece in re.split(r"\s*,\s*|\s+", constraint):
        if not piece:
            continue
        if piece[0] in "^~" and not piece.startswith("~="):
            version = piece[1:]
            numbers = version.split(".")
            if piece[0] == "^":
                first = next((i for i, n in enumerate(numbers) if n != "0"), len(numbers) - 1)
            else:
                first = min(1, len(numbers) - 1) if len(numbers) > 1 else 0
            upper = (
                [*numbers[:first], str(int(numbers[first]) + 1)]
                if numbers[first].isdigit()
                else None
            )
            parts.append(f">={version}")
            if upper:
                parts.append(f"<{'.'.join(upper)}")
        elif piece[0].isdigit():
            parts.append(f"=={piece}")
        else:
            parts.append(piece)
    return ",".join(parts)


def read(text: str) -> list[Item]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProjectParseError(f"not valid TOML: {exc}") from None
    lines = Lines(text)
    where = _Locator(lines)
    found: list[Item] = []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}

    def pep621(values, table: str, key: str, path: tuple):
        if not isinstance(values, list):
            return
        start = where.key_line(table, key) or 1
        for index, value in enumerate(values):
            if not isinstance(value, str):
                continue
            requirement = parse_requirement(value)
            spot = where.string(value, start)
            if requirement is None or spot is None:
                continue
            start = spot[0]
            line, col = spot
            found.append(Pin(line, col, col + len(value), (*path, index), value, requirement))

    pep621(project.get("dependencies"), "project", "dependencies", ("project", "dependencies"))
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        for group, values in optional.items():
            pep621(
                values,
                "project.optional-dependencies",
                group,
                ("project", "optional-dependencies", group),
            )
    requires = project.get("requires-python")
    number = where.key_line("project", "requires-python")
    if isinstance(requires, str) and number:
        col = lines.content(number).find(requires) + 1
        found.append(
            PythonRequires(
                number, col, col + len(requires), ("requires-python",), requires, requires
            )
        )
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    tables = [("tool.poetry.dependencies", poetry.get("dependencies"))]
    for group, body in (poetry.get("group") or {}).items():
        if isinstance(body, dict):
            tables.append((f"tool.poetry.group.{group}.dependencies", body.get("dependencies")))
    for table, values in tables:
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            constraint = value if isinstance(value, str) else None
            if isinstance(value, dict) and isinstance(value.get("version"), str):
                constraint = value["version"]
            number = where.key_line(table, name)
            if constraint is None or number is None:
                continue
            line = lines.content(number)
            col = line.find(name) + 1
            spec = _poetry_specifier(constraint)
            if name == "python":
                shown = value if isinstance(value, str) else spec
                found.append(
                    PythonRequires(
                        number, col, len(line) + 1, ("poetry-python", table), spec, shown
                    )
                )
                continue
            try:
                requirement = Requirement(f"{name}{spec}")
            except Exception:  # noqa: BLE001 - a constraint packaging cannot read: skip it
                continue
            shown = line.strip().split("#")[0].strip()
            found.append(
                Pin(number, col, col + len(shown), ("poetry", table, name), shown, requirement)
            )
    return found + line_items(lines)


def edit(text: str, item: Item, replacement: str) -> tuple[object, str] | None:
    """A pin or python-requires: the key path of the value and its new text, for tomlkit;
    a line or a part of one: a text edit."""
    if not isinstance(item, (Pin, PythonRequires)):
        return text_edit(text, item, replacement)
    if item.where[0] == "poetry":
        replacement = _poetry_replacement(replacement)
    return (item.where, replacement), replacement


def _poetry_replacement(replacement: str) -> str:
    """What a Poetry dependency line becomes: `torch-neuronx = "2.14.*"`, or "" (removed)."""
    if replacement == "":
        return ""
    requirement = Requirement(split_marker(replacement)[0])
    version = str(requirement.specifier).removeprefix("==")
    return f'{requirement.name} = "{version}"'


def _new_string(old, value: str):
    import tomlkit
    from tomlkit.items import StringType

    literal = getattr(old, "type", None) in (StringType.SLL, StringType.MLL)
    return tomlkit.string(value, literal=literal)


def apply(text: str, edits: list) -> str:
    """Text edits first (they do not move keys), then the values by key path with tomlkit."""
    import tomlkit

    text = apply_edits(text, [e for e in edits if isinstance(e, TextEdit)])
    values = [e for e in edits if not isinstance(e, TextEdit)]
    if not values:
        return text
    doc = tomlkit.parse(text)
    removals = []
    for where, replacement in values:
        if where[0] == "requires-python":
            doc["project"]["requires-python"] = _new_string(
                doc["project"]["requires-python"], replacement
            )
        elif where[0] == "poetry-python":
            table = _table(doc, where[1])
            old = table["python"]
            if isinstance(old, str):
                table["python"] = _new_string(old, replacement)
            else:
                old["version"] = replacement
        elif where[0] == "poetry":
            table = _table(doc, where[1])
            name = where[2]
            if replacement == "":
                removals.append((table, name))
                continue
            new_name, _, version = replacement.partition(" = ")
            version = version.strip('"')
            old = table[name]
            if isinstance(old, str):
                value = _new_string(old, version)
            else:
                old["version"] = version
                value = old
            if new_name == name:
                table[name] = value
            else:
                _rename(table, name, new_name, value)
        else:
            array = doc
            for key in where[:-1]:
                array = array[key]
            if replacement == "":
                removals.append((array, where[-1]))
            else:
                array[where[-1]] = _new_string(array[where[-1]], replacement)
    # remove from the end so the other indexes stay right
    for container, key in sorted(
        removals, key=lambda r: (id(r[0]), r[1] if isinstance(r[1], int) else -1), reverse=True
    ):
        del container[key]
    return tomlkit.dumps(doc)


def _table(doc, dotted: str):
    table = doc
    for key in dotted.split("."):
        table = table[key]
    return table


def _rename(table, old: str, new: str, value) -> None:
    """Give a key a new name in place (tomlkit has no rename): rebuild the table's body."""
    items = list(table.items())
    for key, _ in items:
        del table[key]
    for key, item in items:
        if key == old:
            table[new] = value
        else:
            table[key] = item
