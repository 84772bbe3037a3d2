"""The one file checker every file kind plugs into: read the bytes, ask the kind's prefilter,
reuse a cached result, decode, check the text (the kind's own work, no I/O), guard against
internal errors, and with --fix write the new text atomically.

A file kind is an object with the `FileKind` protocol; checkers/__init__.py lists them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from neuron_migrate.checkers.textio import Decoded, DecodeProblem, write_atomic
from neuron_migrate.config.settings import Settings, Target, ignored_codes_for
from neuron_migrate.config.settings import covers as settings_covers
from neuron_migrate.engine.ruleset import RuleSet
from neuron_migrate.model import FileResult, Finding, Safety, Severity, Span
from neuron_migrate.packs.loader import Rule

PARSE_ERROR = ("NM000", "parse-error")


@dataclass(frozen=True)
class Options:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    # fix only the findings with these keys (finding_key: code, cell, line, column), in one
    # round; None: every fixable finding (editors fix one finding at a time)
    only: frozenset[tuple[str, int, int, int]] | None = None

    @property
    def rewrites(self) -> bool:
        return self.fix or self.diff

    def wants_fix(self, finding: Finding) -> bool:
        """Is this finding's fix one to apply: safe (or unsafe when allowed), and chosen?"""
        fix = finding.fix
        if fix is None or (fix.safety is not Safety.SAFE and not self.unsafe_fixes):
            return False
        return self.only is None or finding_key(finding) in self.only


def finding_key(finding: Finding) -> tuple[str, int, int, int]:
    """What names one finding of a text (for Options.only): code, cell (0 outside notebooks),
    line and column."""
    return (finding.code, finding.cell or 0, finding.span.line, finding.span.column)


@dataclass
class Job:
    """What every file of a run shares; built once per process."""

    rules: tuple[Rule, ...]
    settings: Settings
    options: Options
    # check results of unchanged files (neuron_migrate.workspace.cache.Cache), None: read afresh
    cache: object | None = None
    _rulesets: dict[tuple[str, ...], RuleSet] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.target: Target = self.settings.target

    def ruleset_for(self, relative: str) -> RuleSet:
        ignored = ignored_codes_for(self.settings, relative)
        key = tuple(sorted(set(ignored)))
        if key not in self._rulesets:
            rules = self.rules
            if key:
                rules = tuple(r for r in rules if not any(covers(sel, r) for sel in key))
            self._rulesets[key] = RuleSet.build(rules, universe=self.universe)
        return self._rulesets[key]

    @property
    def universe(self) -> tuple[Rule, ...]:
        """Every rule of the loaded packs, enabled or not (a catch-all must not report what a
        disabled rule owns)."""
        from neuron_migrate.packs.loader import load_rules

        return load_rules(self.settings.packs)


def covers(selector: str, rule: Rule) -> bool:
    """Does a selector (`ALL`, a code prefix or a rule name; any case) cover the rule?"""
    return settings_covers(selector, rule)


def problem(path: str, reason: str, span: Span | None = None) -> Finding:
    """The finding for a file that cannot be read or parsed (NM000, the engine's own code)."""
    return Finding(
        path=path,
        code=PARSE_ERROR[0],
        name=PARSE_ERROR[1],
        severity=Severity.ERROR,
        message=reason,
        span=span or Span(1, 1, 1, 1),
    )


class FileKind(Protocol):
    """What a kind of file (Python, notebook, project file) gives the shared checker."""

    name: str

    def wants(self, data: bytes, job: Job, relative: str) -> bool:
        """The byte prefilter: could an enabled rule find anything here?"""

    def decode(self, data: bytes) -> Decoded:
        """The file's text; raises DecodeProblem."""

    def check_text(self, text: str, path: str, job: Job, relative: str) -> FileResult:
        """Check (and with fix/diff options, fix) the text. No I/O."""


class VerifyError(Exception):
    """A fix produced text that does not parse: nothing is written."""


def guarded(display: str, check: Callable[[], FileResult]) -> FileResult:
    """Run one file's checker; an unexpected failure becomes that file's error, never the run's."""
    try:
        return check()
    except VerifyError as exc:
        return FileResult(display, error=f"internal error: {exc}; the file was left alone")
    except Exception as exc:  # noqa: BLE001 - one file's failure must not stop the run
        return FileResult(
            display,
            error=f"internal error: {type(exc).__name__}: {exc} (please report it with this file)",
        )


def write_fixed(
    path: Path,
    result: FileResult,
    job: Job,
    data: bytes,
    encode: Callable[[str], bytes],
    recheck: Callable[[Job], FileResult] | None = None,
) -> FileResult:
    """With --fix, write the fixed text (`encode` turns it into the file's bytes) atomically.
    When the file cannot be written, nothing was fixed: the findings are those of the file as
    it is (`recheck(job)` checks it again without fixing) and the run must not say otherwise."""
    if result.fixed_source is not None and job.options.fix:
        try:
            write_atomic(_link_target(path, job), encode(result.fixed_source), data)
            result.written = True
        except (OSError, UnicodeEncodeError) as exc:
            error = f"not fixed: {getattr(exc, 'strerror', None) or exc}"
            if recheck is not None:
                unfixed = guarded(result.path, lambda: recheck(unfixing(job)))
                result.findings = unfixed.findings
                result.warnings = unfixed.warnings
            result.applied = 0
            result.fixed_source = None
            result.error = error
    return result


def _link_target(path: Path, job: Job) -> Path:
    """The file a fix writes: a symbolic link stays a link and its target is fixed, when the
    target is inside the project; a link out of the project is left alone."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    root = Path(os.path.realpath(job.settings.root))
    if not target.is_relative_to(root):
        raise OSError(f"a link to {target}, outside the project {root}; not followed")
    return target


def unfixing(job: Job) -> Job:
    """The same job, checking only (for a file whose fixes could not be written)."""
    from dataclasses import replace

    return replace(job, options=Options(unsafe_fixes=job.options.unsafe_fixes), cache=None)


def from_cache(data: bytes, display: str, relative: str, job: Job) -> FileResult | None:
    """A file's cached findings, when the run uses the cache and has them."""
    cache = job.cache if not job.options.rewrites else None
    if cache is None:
        return None
    found = cache.get(relative, data, display)
    return None if found is None else FileResult(display, findings=found)


def settled(
    kind: FileKind, data: bytes, display: str, relative: str, job: Job
) -> FileResult | None:
    """A file's result without checking it: its cached findings, or an empty result when its
    kind's prefilter skips its bytes (cached as such). None: the file is to be checked."""
    cached = from_cache(data, display, relative, job)
    if cached is not None:
        return cached
    if kind.wants(data, job, relative):
        return None
    if job.cache is not None and not job.options.rewrites:
        job.cache.put(relative, data, [])  # the prefilter costs more than a cache hit
    return FileResult(display)


def check_file(kind: FileKind, path: Path, display: str, relative: str, job: Job) -> FileResult:
    """Read a file, check it with its kind, and with --fix write it back atomically."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return FileResult(display, findings=[problem(display, "is a folder, not a file")])
    except OSError as exc:
        return FileResult(
            display, findings=[problem(display, f"cannot read: {exc.strerror or exc}")]
        )
    done = settled(kind, data, display, relative, job)
    if done is not None:
        return done
    cache = job.cache if not job.options.rewrites else None
    try:
        decoded = kind.decode(data)
    except DecodeProblem as exc:
        return FileResult(display, findings=[problem(display, str(exc))])

    def check() -> FileResult:
        result = kind.check_text(decoded.text, display, job, relative)
        if cache is not None and result.error is None and not result.warnings:
            cache.put(relative, data, result.findings)
        return result

    result = guarded(display, check)
    return write_fixed(
        path,
        result,
        job,
        data,
        decoded.encode,
        lambda plain: kind.check_text(decoded.text, display, plain, relative),
    )
