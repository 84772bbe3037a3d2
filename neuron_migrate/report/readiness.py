"""The migration readiness report behind `neuron-migrate report`: per rule and per file, how
many findings `--fix` (safe) and `--unsafe-fixes` would resolve and how many need a manual
change; the blockers (errors no fix resolves) grouped by rule and file, with each rule's
instruction once; and one readiness figure.

The figures are counted from the findings `check` reports, each with the fix it offers (safe,
unsafe) or none: one run, as fast as `check`, and every headline figure is the sum of a table
and what `check` says for the same tree. Nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.model import FileResult, Finding, Safety, Severity
from neuron_migrate.packs.loader import Rule, load_rules


@dataclass
class Row:
    """One rule, one file or one pack."""

    name: str
    findings: int = 0
    safe: int = 0
    unsafe: int = 0
    manual: int = 0
    errors: int = 0
    pack: str = ""
    severity: str = ""
    title: str = ""

    def add(self, finding: Finding) -> None:
        self.findings += 1
        if finding.fix is None:
            self.manual += 1
        elif finding.fix.safety is Safety.SAFE:
            self.safe += 1
        else:
            self.unsafe += 1
        if finding.severity is Severity.ERROR:
            self.errors += 1


@dataclass
class BlockerFile:
    path: str
    # where in the file: "12:5", or "cell 3:4:1" in a notebook
    places: list[str] = field(default_factory=list)


@dataclass
class Blockers:
    """The blockers of one rule: its instruction once, then each file with its places."""

    code: str
    name: str
    instruction: str
    # one of the messages, as an example of what the rule says
    message: str
    count: int = 0
    files: list[BlockerFile] = field(default_factory=list)


@dataclass
class Readiness:
    rules: list[Row] = field(default_factory=list)
    files: list[Row] = field(default_factory=list)
    packs: list[Row] = field(default_factory=list)
    blockers: list[Blockers] = field(default_factory=list)
    findings: int = 0
    resolved_by_fix: int = 0
    resolved_by_unsafe: int = 0
    files_checked: int = 0
    files_with_errors: int = 0
    files_free_after_fix: int = 0
    files_free_after_unsafe: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def blocker_count(self) -> int:
        return sum(b.count for b in self.blockers)

    @property
    def manual(self) -> int:
        return self.findings - self.resolved_by_unsafe

    @staticmethod
    def share(part: int, whole: int) -> float:
        return 100.0 if whole == 0 else 100.0 * part / whole

    @property
    def fix_share(self) -> float:
        return self.share(self.resolved_by_fix, self.findings)

    @property
    def unsafe_share(self) -> float:
        return self.share(self.resolved_by_unsafe, self.findings)

    @property
    def files_fix_share(self) -> float:
        return self.share(self.files_free_after_fix, self.files_checked)

    @property
    def files_unsafe_share(self) -> float:
        return self.share(self.files_free_after_unsafe, self.files_checked)

    @property
    def headline(self) -> str:
        return (
            f"{self.fix_share:.0f}% of {self.findings} findings are resolved by `--fix` "
            f"({self.unsafe_share:.0f}% with `--unsafe-fixes`); afterwards "
            f"{self.files_fix_share:.0f}% of {self.files_checked} files are free of errors "
            f"({self.files_unsafe_share:.0f}% with `--unsafe-fixes`)."
        )


# a sentence about what the automatic fix does is no instruction for a finding it cannot fix
_ABOUT_THE_FIX = re.compile(r"--fix|--unsafe-fixes|\bthe fix\b|\bfixes\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def instruction(rule: Rule | None, code: str) -> str:
    """What to do by hand: the rule's fix text less what it says about `--fix`."""
    fallback = f"`neuron-migrate explain {code}` says how."
    if rule is None or not rule.fix_text:
        return fallback
    for paragraph in rule.fix_text.strip().split("\n\n"):
        text = " ".join(paragraph.split())
        kept = [s for s in _SENTENCE_END.split(text) if s and not _ABOUT_THE_FIX.search(s)]
        if kept:
            return " ".join(kept)
    return fallback


def _blocker_place(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{cell}{finding.span.line}:{finding.span.column}"


def _free(findings: list[Finding], unsafe: bool) -> bool:
    """No error is left once the fixes are applied."""
    for finding in findings:
        if finding.severity is not Severity.ERROR:
            continue
        fix = finding.fix
        if fix is None or (fix.safety is Safety.UNSAFE and not unsafe):
            return False
    return True


def measure(plain: list[FileResult], rules: tuple[Rule, ...]) -> Readiness:
    by_code = {r.code: r for r in rules}
    report = Readiness()
    findings = sorted((f for r in plain for f in r.findings), key=Finding.sort_key)
    report.findings = len(findings)
    rule_rows: dict[str, Row] = {}
    file_rows: dict[str, Row] = {}
    pack_rows: dict[str, Row] = {}
    blockers: dict[str, Blockers] = {}
    blocker_files: dict[tuple[str, str], BlockerFile] = {}
    for finding in findings:
        rule = by_code.get(finding.code)
        pack = rule.pack if rule else "core"
        row = rule_rows.setdefault(
            finding.code,
            Row(finding.code, pack=pack, severity=finding.severity.value, title=finding.name),
        )
        row.add(finding)
        file_rows.setdefault(finding.path, Row(finding.path)).add(finding)
        pack_rows.setdefault(pack, Row(pack)).add(finding)
        if finding.severity is Severity.ERROR and finding.fix is None:
            group = blockers.get(finding.code)
            if group is None:
                group = blockers[finding.code] = Blockers(
                    finding.code, finding.name, instruction(rule, finding.code), finding.message
                )
            group.count += 1
            key = (finding.code, finding.path)
            if key not in blocker_files:
                blocker_files[key] = BlockerFile(finding.path)
                group.files.append(blocker_files[key])
            blocker_files[key].places.append(_blocker_place(finding))
    report.rules = sorted(rule_rows.values(), key=lambda r: r.name)
    report.files = sorted(file_rows.values(), key=lambda r: r.name)
    report.packs = sorted(pack_rows.values(), key=lambda r: (-r.findings, r.name))
    report.blockers = sorted(blockers.values(), key=lambda b: (-b.count, b.code))
    report.resolved_by_fix = sum(r.safe for r in report.rules)
    report.resolved_by_unsafe = report.resolved_by_fix + sum(r.unsafe for r in report.rules)
    report.files_checked = len(plain)
    report.files_with_errors = sum(
        1 for r in plain if any(f.severity is Severity.ERROR for f in r.findings)
    )
    report.files_free_after_fix = sum(1 for r in plain if _free(r.findings, unsafe=False))
    report.files_free_after_unsafe = sum(1 for r in plain if _free(r.findings, unsafe=True))
    report.problems = [f"{r.path}: {r.error}" for r in plain if r.error]
    return report


def build(
    paths: list[Path], settings: Settings, jobs: int | None = None, progress=None
) -> Readiness:
    from neuron_migrate.api import run

    plain = run(paths, settings, Options(), jobs=jobs, progress=progress)
    files = plain.files
    return measure(files, load_rules(settings.packs))
