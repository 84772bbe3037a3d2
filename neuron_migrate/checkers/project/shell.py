"""Shell launchers (*.sh) and Dockerfiles (RUN / ENV / FROM): their commands, the variables
they set, the pins of their `pip install` commands, their base images and their lines.

A small shell reader: continued lines are joined into one command line that remembers where each
character came from; commands are split at `;`, `&&`, `||`, `|`, `&`; words keep their quotes
and their positions. Nothing is run or expanded."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import (
    Assignment,
    Command,
    Image,
    Item,
    Option,
    Pin,
    Word,
    parse_requirement,
)
from neuron_migrate.checkers.project.configs import line_items, text_edit
from neuron_migrate.checkers.project.core import Lines, TextEdit, apply_edits
from neuron_migrate.checkers.project.pins import PIP_VALUE_OPTIONS

ITEMS = frozenset({"pin", "option", "env", "command", "line"})
DOCKERFILE_ITEMS = ITEMS | {"image"}
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PYTHON = re.compile(r"(^|/)python[0-9.]*$")
_WRAPPERS = {"sudo", "exec", "time", "nohup", "nice", "stdbuf", "srun", "mpirun"}


class Logical:
    """One command line made of continued physical lines, with each character's position."""

    def __init__(self, lines: Lines, first: int, last: int, skip: int = 0):
        self.first, self.last = first, last
        chars: list[str] = []
        where: list[tuple[int, int]] = []
        for number in range(first, last + 1):
            text = lines.content(number)
            start = skip if number == first else 0
            if number < last and text.rstrip().endswith("\\"):
                text = text.rstrip()[:-1]
            for col in range(start, len(text)):
                chars.append(text[col])
                where.append((number, col + 1))
            chars.append(" ")
            where.append((number, len(text) + 1))
        self.text = "".join(chars)
        self.where = where

    def pos(self, index: int) -> tuple[int, int]:
        return self.where[min(index, len(self.where) - 1)]


def _words(text: str) -> list[list[tuple[str, int, int]]]:
    """Simple commands of a command line, as words; a comment ends the line."""
    commands: list[list[tuple[str, int, int]]] = [[]]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == "#":
            break
        if c in ";&|":
            j = i + 1
            while j < n and text[j] in "&|":
                j += 1
            commands.append([])
            i = j
            continue
        start = i
        while i < n and not text[i].isspace() and text[i] not in ";&|":
            if text[i] in "\"'":
                close = text.find(text[i], i + 1)
                i = n if close == -1 else close + 1
            elif text[i] == "\\":
                i += 2
            else:
                i += 1
        commands[-1].append((text[start:i], start, i))
    return [c for c in commands if c]


def _logicals(lines: Lines, dockerfile: bool):
    """(kind, Logical) for each command line: kind is 'shell', 'env', 'from' or 'other'."""
    number = 1
    total = len(lines)
    while number <= total:
        text = lines.content(number)
        last = number
        while last < total and lines.content(last).rstrip().endswith("\\"):
            last += 1
        kind, skip = "shell", 0
        if dockerfile:
            found = re.match(r"^\s*([A-Za-z]+)\s+", text)
            instruction = found.group(1).upper() if found else ""
            kind = {"RUN": "shell", "ENV": "env", "FROM": "from"}.get(instruction, "other")
            skip = found.end() if found else 0
            if kind == "shell" and text[skip:].lstrip().startswith("["):
                kind = "other"  # exec form: JSON, not a shell command
        yield kind, Logical(lines, number, last, skip)
        number = last + 1


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.lines = Lines(text)
        self.items: list[Item] = []

    def word(self, logical: Logical, part: tuple[str, int, int]) -> Word:
        text, start, end = part
        line, col = logical.pos(start)
        end_line, end_col = logical.pos(end - 1)
        end = end_col + 1 if end_line == line else len(self.lines.content(line)) + 1
        return Word(line, col, end, None, text, start)

    def lines_edit(self, logical: Logical) -> TextEdit:
        start = self.lines.starts[logical.first - 1]
        return TextEdit(start, self.lines.whole_line(logical.last).end, "")

    def word_edit(self, word: Word) -> TextEdit:
        """The word and the blanks after it."""
        start = self.lines.offset(word.line, word.col)
        end = start + len(word.text)
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        return TextEdit(start, end, "")

    def assignments(self, logical: Logical, words: list[Word], whole: bool) -> None:
        """`export A=1 B=2`, `A=1` or Docker `ENV A=1`: the statement can go as a whole when
        it is alone on its line and every word of it sets a variable."""
        names = []
        for word in words:
            found = _ASSIGN.match(word.text)
            names.append(found.group(1) if found else word.text if _NAME.match(word.text) else None)
        removable = whole and all(names)
        statement = tuple(names) if removable else ()
        edit = self.lines_edit(logical) if removable else None
        for word, name in zip(words, names):
            if name is not None:
                self.items.append(
                    Assignment(word.line, word.col, word.end_col, edit, name, statement, removable)
                )

    def option(self, word: Word, value: Word | None) -> None:
        """`--index-url URL`, `--index-url=URL`, `--pre`: removed with the blanks after it."""
        name, equals, inline = word.value.partition("=")
        last = value or word
        start = self.lines.offset(word.line, word.col)
        end = self.lines.offset(last.line, last.col) + len(last.text)
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        end_col = last.end_col if last.line == word.line else len(self.lines.content(word.line)) + 1
        self.items.append(
            Option(
                word.line,
                word.col,
                end_col,
                TextEdit(start, end, ""),
                name,
                inline if equals else value.value if value else "",
            )
        )

    def pip(self, logical: Logical, args: list[Word]) -> None:
        skip_next = False
        for index, word in enumerate(args):
            if skip_next:
                skip_next = False
                continue
            if word.text.startswith("-"):
                skip_next = word.text in PIP_VALUE_OPTIONS
                following = args[index + 1] if skip_next and index + 1 < len(args) else None
                self.option(word, following)
                continue
            requirement = parse_requirement(word.value)
            if requirement is None or requirement.url:
                continue
            quoted = word.text != word.value
            col = word.col + (1 if quoted else 0)
            self.items.append(
                Pin(word.line, col, col + len(word.value), quoted, word.value, requirement)
            )

    def command(self, logical: Logical, words: list[Word], whole: bool) -> None:
        i = 0
        while i < len(words) and _ASSIGN.match(words[i].text):
            i += 1
        prefix, rest = words[:i], words[i:]
        if not rest:
            self.assignments(logical, prefix, whole)
            return
        for word in prefix:
            name = _ASSIGN.match(word.text).group(1)
            self.items.append(
                Assignment(word.line, word.col, word.end_col, self.word_edit(word), name)
            )
        while rest and rest[0].value in _WRAPPERS:
            rest = rest[1:]
        if not rest:
            return
        head = rest[0].value
        if head == "export":
            self.assignments(logical, rest[1:], whole and not prefix)
            return
        if head == "env":
            self.command(logical, rest[1:], False)
            return
        first = rest[0]
        self.items.append(
            Command(first.line, first.col, first.end_col, None, tuple(rest), logical.text)
        )
        values = [w.value for w in rest]
        pip_at = None
        if head in ("pip", "pip3") and values[1:2] == ["install"]:
            pip_at = 2
        elif _PYTHON.search(head) and values[1:4] == ["-m", "pip", "install"]:
            pip_at = 4
        elif head == "uv" and values[1:3] == ["pip", "install"]:
            pip_at = 3
        if pip_at is not None:
            self.pip(logical, rest[pip_at:])

    def image(self, logical: Logical) -> None:
        words = [self.word(logical, w) for c in _words(logical.text) for w in c]
        words = [w for w in words if not w.text.startswith("--")]
        if not words:
            return
        word = words[0]
        reference = word.value
        name = reference.split("@", 1)[0]
        slash = name.rfind("/")
        colon = name.rfind(":")
        if colon > slash:
            name = name[:colon]
        self.items.append(Image(word.line, word.col, word.end_col, None, name, reference))

    def read(self, dockerfile: bool) -> list[Item]:
        for kind, logical in _logicals(self.lines, dockerfile):
            if kind == "from":
                self.image(logical)
            if kind in ("other", "from"):
                continue
            commands = [[self.word(logical, w) for w in c] for c in _words(logical.text)]
            whole = len(commands) == 1
            for words in commands:
                if kind == "env":
                    self.assignments(logical, words, whole)
                else:
                    self.command(logical, words, whole)
        return self.items + line_items(self.lines)


def read(text: str) -> list[Item]:
    return _Reader(text).read(dockerfile=False)


def edit(text: str, item: Item, replacement: str) -> tuple[TextEdit, str] | None:
    if isinstance(item, (Assignment, Option)):
        return (item.where, replacement) if item.where is not None and replacement == "" else None
    if not isinstance(item, Pin):
        return text_edit(text, item, replacement)
    lines = Lines(text)
    start = lines.offset(item.line, item.col)
    end = start + len(item.text)
    if replacement == "":
        while end < len(text) and text[end] in " \t":
            end += 1
    new = replacement
    if new and not item.where and "*" in new:
        new = f'"{new}"'  # an unquoted `*` would be a glob
    return TextEdit(start, end, new), replacement


def apply(text: str, edits: list[TextEdit]) -> str:
    return apply_edits(text, edits)


class _Dockerfile:
    ITEMS = DOCKERFILE_ITEMS
    edit = staticmethod(edit)
    apply = staticmethod(apply)

    @staticmethod
    def read(text: str) -> list[Item]:
        return _Reader(text).read(dockerfile=True)


DOCKERFILE = _Dockerfile()
