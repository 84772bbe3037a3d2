"""Project rules: found from the packs, dispatched item by item, turned into Hits.

A rule takes part when one of its `[[match]]` tables has `kind = "project"`. Its module, if any,
is the `.py` file beside its TOML with the same stem (packs/modules.py imports it, so that it
can import its pack's shared code: `from . import pack`).
Nothing here names a rule: which rule reads what comes from the packs.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from neuron_migrate.checkers.project.api import (
    Check,
    Context,
    Item,
    Pin,
    Report,
    canonical_pattern,
    default_check,
    item_type,
)
from neuron_migrate.checkers.project.core import Hit
from neuron_migrate.packs.loader import PackError, Pattern, Rule
from neuron_migrate.packs.modules import import_rule_module
from neuron_migrate.packs.vocabulary import PROJECT_DATA_ITEMS


@dataclass(frozen=True, eq=False)
class ProjectRule:
    rule: Rule
    # item type -> the module's check, or default_check for a data case
    checks: dict[str, Check]


def _cases(rule: Rule) -> list[Pattern]:
    return [p for p in rule.patterns if p.kind == "project"]


def rule_module(rule: Rule) -> types.ModuleType | None:
    """The module beside a rule's TOML file (same stem), imported once; None if there is none."""
    if rule.module is None:
        return None
    try:
        return import_rule_module(rule.module)
    except Exception as exc:  # noqa: BLE001 - a pack's broken module is the pack's error
        raise PackError(f"{rule.module}: cannot import: {type(exc).__name__}: {exc}") from None


def _module_checks(rule: Rule, module: types.ModuleType) -> dict[str, Check]:
    found: dict[str, Check] = {}
    for value in vars(module).values():
        item = getattr(value, "project_item", None)
        if item is None or not callable(value):
            continue
        if item in found:
            raise PackError(f"{module.__file__}: two checks of {item!r}")
        found[item] = value
    return found


def _project_rule(rule: Rule) -> ProjectRule:
    where = f"{rule.module or rule.pack}: rule {rule.code}"
    module = rule_module(rule)
    own = _module_checks(rule, module) if module is not None else {}
    reads = {p.reads for p in _cases(rule)}
    stray = sorted(set(own) - reads)
    if stray:
        raise PackError(f"{where}: the module checks {stray[0]!r} but no match reads it")
    checks: dict[str, Check] = {}
    for case in _cases(rule):
        if case.reads in own:
            checks[case.reads] = own[case.reads]
            continue
        if case.reads not in PROJECT_DATA_ITEMS or not case.names or case.safety is not None:
            raise PackError(
                f"{where}: the case reading {case.reads!r} needs a check of it in "
                f"{rule.module or 'a code module beside the rule file'} "
                "(a data case has `names`, no `safety`, and reads "
                f"{', '.join(sorted(PROJECT_DATA_ITEMS))})"
            )
        checks[case.reads] = default_check
    return ProjectRule(rule, checks)


@lru_cache(maxsize=32)
def project_rules(rules: tuple[Rule, ...]) -> tuple[ProjectRule, ...]:
    """The project rules among `rules`, with their checks; raises PackError for a rule whose
    cases and module do not fit together."""
    return tuple(_project_rule(r) for r in rules if _cases(r))


def _trigger(case: Pattern) -> list[str]:
    """What a file must contain for a case to find anything: its `triggers`, else its names
    (the literal part of each; package names in any spelling pip accepts; for a line, the
    regular expression itself). [] when a name has no literal part: every file is read."""
    if case.triggers:
        return list(case.triggers)
    out = []
    for name in case.names:
        if case.reads == "line":
            out.append(name)
            continue
        if case.reads == "pin":
            name = canonical_pattern(name)
        # a command's words may be spaced or quoted anyhow: its longest word must be there
        pieces = name.split() if case.reads == "command" else [name]
        literal = max((p for w in pieces for p in re.split(r"[*?\[\]]+", w)), key=len)
        if not literal:
            return []
        if case.reads == "pin":
            parts = [re.escape(p) for p in literal.split("-")]
            out.append("(?i:" + "[-_.]+".join(parts) + ")")
        else:
            out.append(re.escape(literal))
    return out


@lru_cache(maxsize=128)
def prefilter(rules: tuple[ProjectRule, ...], items: frozenset[str]) -> re.Pattern[bytes] | None:
    """The bytes a file that yields `items` must match for any of `rules` to find something;
    None when none of them reads such items. A case without triggers lets every file through."""
    alternatives: set[str] = set()
    for project_rule in rules:
        for case in _cases(project_rule.rule):
            if case.reads not in items:
                continue
            found = _trigger(case)
            if not found:
                return re.compile(b"")
            alternatives.update(found)
    if not alternatives:
        return None
    return re.compile("|".join(sorted(alternatives)).encode())


def run(rules: Iterable[ProjectRule], items: list[Item], text: str) -> list[tuple[Rule, Report]]:
    """Every rule's check on every item it reads, in file order."""
    pins = [i for i in items if isinstance(i, Pin)]
    memo: dict = {}
    contexts = [(r, Context(r.rule, text, pins, memo)) for r in rules]
    out = []
    for item in items:
        kind = item_type(item)
        for project_rule, ctx in contexts:
            check = project_rule.checks.get(kind)
            if check is not None:
                out.extend((project_rule.rule, report) for report in check(item, ctx))
    return out


def hit(rule: Rule, report: Report, edit: tuple[object, str] | None) -> Hit:
    """A Hit for the format's fix loop: the edit is the format's, made from the replacement."""
    at = report.at
    fixed = edit is not None and report.safety is not None
    return Hit(
        code=rule.code,
        line=at.line,
        col=at.col,
        end_col=at.end_col,
        message=report.message,
        safety=report.safety if fixed else None,
        replacement=edit[1] if fixed else None,
        edit=edit[0] if fixed else None,
    )
