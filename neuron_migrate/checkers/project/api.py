"""What a project rule's module sees: the items read from project files, the context, reports.

A project rule is a TOML file in a pack folder whose `[[match]]` tables have `kind = "project"`.
Each such table is a *case* of the rule: the item type it `reads` (pin, option,
python-requires, env, command, image, line: packs/vocabulary.py PROJECT_ITEMS), the `names` it
is about, the `message` printed for it (a template with `{placeholders}`) and the `safety` of
its fix.

Without a module, a rule is data: every item whose name matches one of a case's `names` is
reported with that case's message (see `report_by_names`; no fix). A rule with logic has a
module beside its TOML with the same stem (`NM123_some_rule.py` beside `NM123_some_rule.toml`)
and one function per item type it reads, registered with `checks`:

    from neuron_migrate.checkers.project.api import Context, Pin, Report, checks

    @checks("pin")
    def check(pin: Pin, ctx: Context) -> list[Report]:
        if not any(pin.named(n) for n in ctx.case("old-package").names):
            return []
        return [ctx.report(pin, "old-package", replacement="", pin=pin.shown)]

A check handles every case of the rule that reads its item type (`report_by_names` reports the
plain data ones); an item type the module does not check is read as data.
`ctx.report` names the case the finding belongs to; its keyword values fill the case's message.
A `replacement` asks for a fix (with the case's safety): for a pin, the new requirement text
("" removes it); for python-requires, the new specifier; for env or option, "" removes the
assignment or the option; for a line, its new text ("" removes it); for a part of a line or a word of a command (report
on `line.part(start, end)` or `command.words[i]` as the item), the new text of that part.
The file's format turns it into an edit of its own syntax, or reports without a fix where it
cannot edit (a hash-pinned requirement line, a setup.cfg `key = value` line).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from neuron_migrate.checkers.project.pins import repin
from neuron_migrate.model import Safety
from neuron_migrate.packs.loader import PackError, Pattern, Rule
from neuron_migrate.packs.vocabulary import PROJECT_ITEMS

__all__ = [
    "Assignment",
    "Command",
    "Context",
    "Image",
    "Item",
    "Line",
    "Option",
    "Pin",
    "PythonRequires",
    "Report",
    "Safety",
    "Word",
    "checks",
    "report_by_names",
]

# ---- items: what the formats read -------------------------------------------------------------


@dataclass
class Item:
    """Where an item is written: 1-based line and columns, `end_col` past its last character."""

    line: int
    col: int
    end_col: int
    # the format's own data for editing the item (an index, a key path, ...)
    where: Any = field(default=None, repr=False, compare=False)


@dataclass
class Pin(Item):
    """A dependency: a requirement line, a PEP 621 / Poetry entry, an `install_requires`
    string, an argument of `pip install`."""

    text: str = ""  # the requirement as written, without comment or quotes
    requirement: Requirement = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    @property
    def name(self) -> str:
        """The canonical name (`Foo_Bar.baz` -> `foo-bar-baz`)."""
        return canonicalize_name(self.requirement.name)

    @property
    def specifier(self) -> SpecifierSet:
        return self.requirement.specifier

    @property
    def shown(self) -> str:
        return self.text.strip()

    def repinned(self, specifier: str, name: str | None = None) -> str:
        """The requirement with a new specifier (and name: extras then go), as written
        otherwise: `foo_bar[x]==2.1 ; m` -> `foo_bar[x]==3.* ; m`."""
        return repin(self.text, specifier, name)

    def named(self, pattern: str) -> bool:
        """Is the pin's package `pattern` (a name, a glob, or a requirement: its name part)?"""
        return fnmatch.fnmatchcase(self.name, canonical_pattern(pattern))


@dataclass
class Option(Item):
    """A pip option: a line of a requirements file (`--index-url URL`) or an option of a
    `pip install` command. Its span covers the option and its value."""

    name: str = ""  # as written: `--index-url`, `-i`
    value: str = ""  # "" for a flag (`--pre`)


@dataclass
class PythonRequires(Item):
    """requires-python, python_requires, or Poetry's `python`."""

    spec: str = ""  # as a PEP 440 specifier
    shown: str = ""  # as written


@dataclass
class Word(Item):
    """A word of a command, positioned; `value` without its quotes."""

    text: str = ""  # as written, quotes included
    offset: int = 0  # where it starts in its command line (continued lines joined)

    @property
    def value(self) -> str:
        text = self.text
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
            return text[1:-1]
        return text


@dataclass
class Assignment(Item):
    """An environment variable set by a launcher: `export A=1`, `A=1`, `A=1 cmd`, `ENV A=1`."""

    name: str = ""
    # the names set by the statement the assignment is part of, when the statement can go as a
    # whole once every one of them goes (`export A=1 B=2`, `ENV A=1`); () for an assignment
    # before a command (`A=1 python t.py`), which goes by itself
    statement: tuple[str, ...] = ()
    # False: removing it cannot be done by an edit (`env A=1`, a line with several commands)
    removable: bool = True


@dataclass
class Command(Item):
    """A simple command of a launcher or a Dockerfile RUN, after its assignments and wrappers
    (`sudo`, `exec`, `nohup`, ...). Its span is its first word."""

    words: tuple[Word, ...] = ()
    # the command line it is part of (continued lines joined): `text` is cut from it
    logical: str = field(default="", repr=False)

    @property
    def text(self) -> str:
        """The command as written, from its first word to its last."""
        last = self.words[-1]
        return self.logical[self.words[0].offset : last.offset + len(last.text)]

    @property
    def values(self) -> list[str]:
        return [w.value for w in self.words]

    def starts_with(self, prefix: str) -> bool:
        """Do the command's words start with the words of `prefix` (`tool export model`)?"""
        wanted = prefix.split()
        return self.values[: len(wanted)] == wanted

    def tail(self, skip: int) -> Command | None:
        """The command after its first `skip` words (`wrapper python t.py` -> `python t.py`)."""
        rest = self.words[skip:]
        if not rest:
            return None
        first = rest[0]
        return Command(first.line, first.col, first.end_col, None, rest, self.logical)


@dataclass
class Image(Item):
    """A Dockerfile `FROM` image."""

    name: str = ""  # without tag or digest: `nvidia/cuda`
    reference: str = ""  # as written: `nvidia/cuda:12.1.0-devel-ubuntu22.04`


@dataclass
class Line(Item):
    """A line of text (comment lines are not items)."""

    text: str = ""

    def part(self, start: int, end: int) -> Item:
        """The span of `text[start:end]`, to report on a part of the line."""
        return Item(self.line, start + 1, end + 1)


ITEM_CLASSES: dict[str, type[Item]] = {
    "pin": Pin,
    "option": Option,
    "python-requires": PythonRequires,
    "env": Assignment,
    "command": Command,
    "image": Image,
    "line": Line,
}
assert set(ITEM_CLASSES) == set(PROJECT_ITEMS)


def item_type(item: Item) -> str:
    for name, cls in ITEM_CLASSES.items():
        if type(item) is cls:
            return name
    raise TypeError(f"not a project item: {item!r}")


def canonical_pattern(pattern: str) -> str:
    """A package name or glob as pip compares names: lower case, `-` for runs of `-_.`; a
    requirement (`foo-bar<2.1`) gives its name part."""
    head = re.split(r"[\s<>=!~;\[(@]", pattern.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", head).lower()


def parse_requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


# ---- reports: what a rule returns -------------------------------------------------------------


@dataclass
class Report:
    """One finding of a rule on an item, under one of its cases."""

    item: Item  # what the fix edits
    at: Item  # where the finding is shown (the item, a word of it, a part of a line)
    case: Pattern
    message: str
    replacement: str | None = None  # None: no fix
    safety: Safety | None = None


@dataclass
class Context:
    """What a rule's check knows besides its item: its own rule (cases, messages, the pack's
    `[lists]`), every pin of the file, the file's text, and a memo shared by the pack's rules
    for one file (for facts computed once per file, such as the torch family it targets)."""

    rule: Rule
    text: str
    pins: list[Pin]
    memo: dict[str, Any]

    @property
    def lists(self) -> dict[str, tuple[str, ...]]:
        return self.rule.lists

    def case(self, name: str) -> Pattern:
        for pattern in self.rule.patterns:
            if pattern.case == name:
                return pattern
        raise PackError(f"{self.rule.module}: rule {self.rule.code}: no match with case {name!r}")

    def cases(self, reads: str) -> list[Pattern]:
        return [p for p in self.rule.patterns if p.kind == "project" and p.reads == reads]

    def report(
        self,
        item: Item,
        case: str | Pattern,
        *,
        at: Item | None = None,
        replacement: str | None = None,
        safety: Safety | None = None,
        **values: Any,
    ) -> Report:
        """A finding under `case`, its message filled with `values`. With a `replacement`, a
        fix of the case's safety (or the weaker `safety` given); a case without `safety` is
        reported only."""
        pattern = self.case(case) if isinstance(case, str) else case
        template = pattern.message or self.rule.message
        try:
            message = template.format_map(values)
        except KeyError as exc:
            raise PackError(
                f"{self.rule.module}: rule {self.rule.code}: the message of case {pattern.case!r} "
                f"has a placeholder {exc} the rule's module does not fill"
            ) from None
        if replacement is not None and pattern.safety is None:
            raise PackError(
                f"{self.rule.module}: rule {self.rule.code}: case {pattern.case!r} has a fix but "
                "no `safety`"
            )
        if safety is None or pattern.safety is Safety.UNSAFE:
            safety = pattern.safety  # a rule may weaken its case's safety, not raise it
        return Report(item, at or item, pattern, message, replacement, safety)


Check = Callable[[Any, Context], list[Report]]


def checks(item_type_name: str) -> Callable[[Check], Check]:
    """Register a module function as the rule's check of one item type."""
    if item_type_name not in PROJECT_ITEMS:
        raise ValueError(f"unknown project item {item_type_name!r}; known: {sorted(PROJECT_ITEMS)}")

    def register(function: Check) -> Check:
        function.project_item = item_type_name  # type: ignore[attr-defined]
        return function

    return register


# ---- the data rule: a case with names and no module ------------------------------------------


def _name_of(item: Item) -> str | None:
    if isinstance(item, (Assignment, Image, Option)):
        return item.name
    return None


def default_check(item: Item, ctx: Context) -> list[Report]:
    """What the cases of a rule without a module report: see `report_by_names`."""
    return report_by_names(item, ctx, ctx.cases(item_type(item)))


def report_by_names(item: Item, ctx: Context, cases: Iterable[Pattern]) -> list[Report]:
    """The reports of data `cases` (no fix) on an item: a pin, an image or an option whose
    name matches one of a case's `names` (globs), an assignment to a variable it names, a
    command that starts with the words of one of its names, a line where one of its names
    (regular expressions) is found. A module calls it for its cases that are plain data."""
    out = []
    for case in cases:
        for name in case.names:
            if isinstance(item, Pin) and item.named(name):
                out.append(ctx.report(item, case, pin=item.shown, name=item.requirement.name))
            elif isinstance(item, Command) and item.starts_with(name):
                out.append(ctx.report(item, case, command=item.text.strip(), name=name))
            elif isinstance(item, Line):
                for found in re.finditer(name, item.text):
                    at = item.part(found.start(), found.end())
                    out.append(ctx.report(item, case, at=at, name=found.group()))
                continue
            elif (value := _name_of(item)) is not None and fnmatch.fnmatchcase(value, name):
                shown = item.reference if isinstance(item, Image) else value
                extra = {"value": item.value} if isinstance(item, Option) else {}
                out.append(ctx.report(item, case, name=shown, **extra))
            else:
                continue
            break  # one report per case
    return out
