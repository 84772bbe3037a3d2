"""Project files beside the code: requirements, pyproject.toml, setup.cfg, setup.py, shell
launchers and Dockerfiles, YAML / JSON / TOML configs.

One format module per syntax; each has `ITEMS` (the item types it reads), `read(text) ->
[Item]`, `edit(text, item, replacement) -> (edit, shown replacement) | None` and `apply(text,
edits) -> text`. This module picks the format by the file name, hands its items to the enabled
project rules (rules.py: the rules' modules or their data cases, api.py: what they see), keeps
the hits that no `# noqa` suppresses, turns them into Findings, and with --fix / --diff applies
the wanted fixes until nothing changes. It knows no rule: the packs say which rules read what.

setup.py is Python too: its checker runs the Python engine first and then the install_requires
check on the (fixed) result, so one file kind gives both sets of findings and one write.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePath

from neuron_migrate.checkers.textio import Decoded, decode
from neuron_migrate.model import FileResult, Finding, Span

MAX_FIX_ROUNDS = 3
# configs bigger than this are data (tokenizers, datasets), not configuration
MAX_CONFIG_BYTES = 2_000_000

_REQUIREMENT_GLOBS = (
    "requirements*.txt",
    "*-requirements.txt",
    "*_requirements.txt",
    "constraints*.txt",
    "requirements*.in",
)
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml")


def format_name(path: PurePath | str) -> str | None:
    """Which format module reads a file, by its name; None for a file this package skips."""
    name = PurePath(path).name
    lower = name.lower()
    if any(fnmatch.fnmatch(lower, g) for g in _REQUIREMENT_GLOBS):
        return "requirements"
    if name == "pyproject.toml":
        return "pyproject"
    if name == "setup.cfg":
        return "setupcfg"
    if name == "setup.py":
        return "setuppy"
    if lower.endswith((".sh", ".bash")):
        return "shell"
    if name in ("Dockerfile", "Containerfile") or name.startswith("Dockerfile."):
        return "dockerfile"
    if lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower.endswith(_CONFIG_SUFFIXES):
        return "configs"
    return None


def _module(fmt: str):
    from neuron_migrate.checkers.project import (
        configs,
        pyproject,
        requirements,
        setupcfg,
        setuppy,
        shell,
    )

    return {
        "requirements": requirements,
        "pyproject": pyproject,
        "setupcfg": setupcfg,
        "setuppy": setuppy,
        "shell": shell,
        "dockerfile": shell.DOCKERFILE,
        "configs": configs,
    }[fmt]


def _enabled(job, relative: str):
    from neuron_migrate.checkers.project.rules import project_rules

    return project_rules(job.ruleset_for(relative).rules)


def _prefilter(job, relative: str, fmt: str):
    """The bytes regex a file of this format must match to be read (None: nothing to read)."""
    from neuron_migrate.checkers.project.rules import prefilter

    return prefilter(_enabled(job, relative), _module(fmt).ITEMS)


def _analyze(module, text: str, rules) -> list:
    from neuron_migrate.checkers.project import rules as dispatch

    hits = []
    for rule, report in dispatch.run(rules, module.read(text), text):
        edit = None
        if report.replacement is not None:
            edit = module.edit(text, report.item, report.replacement)
        hits.append(dispatch.hit(rule, report, edit))
    return hits


def _findings(hits, lines, path: str, rules) -> tuple[list[Finding], list]:
    from neuron_migrate.engine.noqa import exempt, file_exemptions, suppresses

    by_code = {r.rule.code: r.rule for r in rules}
    findings, live = [], []
    exempted = file_exemptions(lines.text)
    for hit in hits:
        rule = by_code[hit.code]
        if exempt(exempted, hit.code):
            continue
        source = lines.content(hit.line)
        if suppresses(source, hit.code):
            continue
        fix = None
        if hit.edit is not None and hit.safety is not None:
            from neuron_migrate.model import Fix

            fix = Fix(hit.safety, hit.replacement)
        finding = Finding(
            path=path,
            code=hit.code,
            name=rule.name,
            severity=rule.severity,
            message=hit.message,
            span=Span(hit.line, hit.col, hit.line, max(hit.end_col, hit.col + 1)),
            fix=fix,
            source_line=source,
        )
        findings.append(finding)
        live.append((hit, finding))
    findings.sort(key=Finding.sort_key)
    return findings, live


def _check_text(text: str, path: str, job, relative: str, fmt: str) -> FileResult:
    from neuron_migrate.checkers.base import problem
    from neuron_migrate.checkers.project.core import Lines, ProjectParseError

    result = FileResult(path=path, original_source=text)
    rules = _enabled(job, relative)
    module = _module(fmt)
    trigger = _prefilter(job, relative, fmt)
    if trigger is None or not trigger.search(text.encode("utf-8", "surrogatepass")):
        return result
    original = text
    try:
        findings, live = _findings(_analyze(module, text, rules), Lines(text), path, rules)
        if job.options.rewrites:
            for _ in range(MAX_FIX_ROUNDS):
                chosen = [hit for hit, finding in live if job.options.wants_fix(finding)]
                if not chosen:
                    break
                new = module.apply(text, [hit.edit for hit in chosen])
                if new == text:
                    break
                result.applied += len(chosen)
                text = new
                findings, live = _findings(_analyze(module, text, rules), Lines(text), path, rules)
                if job.options.only is not None:
                    break  # the chosen findings' positions name nothing in the new text
    except ProjectParseError as exc:
        span = Span(exc.line, exc.col, exc.line, exc.col)
        result.findings = [problem(path, str(exc), span)]
        result.applied = 0
        return result
    if text != original:
        result.fixed_source = text
    result.findings = findings
    return result


def check_format_text(text: str, path: str, job, relative: str, fmt: str) -> FileResult:
    """Check (and with fix/diff options, fix) text in one of the formats of this package
    (`shell` for a notebook's `%%bash` cell). No file I/O."""
    return _check_text(text, path, job, relative, fmt)


def check_project_source(text: str, path: str, job, relative: str | None = None) -> FileResult:
    """Check (and with fix/diff options, fix) a project file's text. No file I/O."""
    relative = relative if relative is not None else path
    fmt = format_name(path) or "configs"
    if fmt != "setuppy":
        return _check_text(text, path, job, relative, fmt)
    from neuron_migrate.checkers.python import check_source

    python = check_source(text, path, job, relative)
    if python.error or any(f.code == "NM000" for f in python.findings):
        return python
    middle = python.fixed_source if python.fixed_source is not None else text
    project = _check_text(middle, path, job, relative, fmt)
    final = project.fixed_source if project.fixed_source is not None else middle
    return FileResult(
        path=path,
        findings=sorted(python.findings + project.findings, key=Finding.sort_key),
        fixed_source=final if final != text else None,
        original_source=text,
        applied=python.applied + project.applied,
    )


class ProjectKind:
    """Files beside the code: requirements, pyproject.toml, setup.cfg, setup.py, launchers,
    Dockerfiles and configs; the format is picked by the file name."""

    name = "project"

    def wants(self, data: bytes, job, relative: str) -> bool:
        fmt = format_name(relative) or "configs"
        if fmt == "configs" and len(data) > MAX_CONFIG_BYTES:
            return False
        if fmt == "setuppy":
            # a setup script is Python too (check_text reads it both ways)
            from neuron_migrate.checkers.python import PYTHON

            if PYTHON.wants(data, job, relative):
                return True
        trigger = _prefilter(job, relative, fmt)
        return trigger is not None and trigger.search(data) is not None

    def decode(self, data: bytes) -> Decoded:
        return decode(data)

    def check_text(self, text: str, path: str, job, relative: str) -> FileResult:
        return check_project_source(text, path, job, relative)


PROJECT = ProjectKind()
