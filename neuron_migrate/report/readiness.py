"""The migration readiness report behind `neuron-migrate report`: per rule and per file, how
many findings `--fix` (safe) and `--unsafe-fixes` would resolve and how many need a manual
change; the blockers (errors no fix resolves) with file:line and the instruction; and one
readiness figure.

The figures are measured, not estimated: the tree is checked once as it is and twice in
`--diff` mode (safe fixes; safe and unsafe fixes), whose remaining findings are those of the
fixed text. Nothing is written.
"""

from __future__ import annotations

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
class Blocker:
    location: str
    code: str
    name: str
    message: str
    instruction: str


@dataclass
class Readiness:
    rules: list[Row] = field(default_factory=list)
    files: list[Row] = field(default_factory=list)
    packs: list[Row] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    findings: int = 0
    resolved_by_fix: int = 0
    resolved_by_unsafe: int = 0
    files_checked: int = 0
    files_with_errors: int = 0
    files_free_after_fix: int = 0
    files_free_after_unsafe: int = 0
    problems: list[str] = field(default_factory=list)

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


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def _errors_by_file(files: list[FileResult]) -> dict[str, int]:
    return {r.path: sum(1 for f in r.findings if f.severity is Severity.ERROR) for r in files}


def measure(
    plain: list[FileResult],
    after_fix: list[FileResult],
    after_unsafe: list[FileResult],
    rules: tuple[Rule, ...],
) -> Readiness:
    by_code = {r.code: r for r in rules}
    report = Readiness()
    findings = sorted((f for r in plain for f in r.findings), key=Finding.sort_key)
    report.findings = len(findings)
    rule_rows: dict[str, Row] = {}
    file_rows: dict[str, Row] = {}
    pack_rows: dict[str, Row] = {}
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
            instruction = _first_paragraph(rule.fix_text) if rule and rule.fix_text else ""
            report.blockers.append(
                Blocker(
                    finding.location,
                    finding.code,
                    finding.name,
                    finding.message,
                    instruction or "`neuron-migrate explain " + finding.code + "` says how.",
                )
            )
    report.rules = sorted(rule_rows.values(), key=lambda r: r.name)
    report.files = sorted(file_rows.values(), key=lambda r: r.name)
    report.packs = sorted(pack_rows.values(), key=lambda r: (-r.findings, r.name))
    left_fix = sum(len(r.findings) for r in after_fix)
    left_unsafe = sum(len(r.findings) for r in after_unsafe)
    report.resolved_by_fix = max(0, report.findings - left_fix)
    report.resolved_by_unsafe = max(0, report.findings - left_unsafe)
    report.files_checked = len(plain)
    report.files_with_errors = sum(1 for n in _errors_by_file(plain).values() if n)
    fix_errors, unsafe_errors = _errors_by_file(after_fix), _errors_by_file(after_unsafe)
    report.files_free_after_fix = sum(1 for r in plain if not fix_errors.get(r.path))
    report.files_free_after_unsafe = sum(1 for r in plain if not unsafe_errors.get(r.path))
    report.problems = [f"{r.path}: {r.error}" for r in plain if r.error]
    return report


def build(paths: list[Path], settings: Settings, jobs: int | None = None) -> Readiness:
    from neuron_migrate.api import run

    plain = run(paths, settings, Options(), jobs=jobs).files
    after_fix = run(paths, settings, Options(diff=True), jobs=jobs).files
    after_unsafe = run(paths, settings, Options(diff=True, unsafe_fixes=True), jobs=jobs).files
    return measure(plain, after_fix, after_unsafe, load_rules(settings.packs))
