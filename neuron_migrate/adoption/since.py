"""Changed-lines gating (`--since REV`): the lines added or changed since the merge base of REV
and HEAD, read from real git (`git merge-base`, `git diff --unified=0`), working tree included;
untracked files (not ignored) count as wholly new."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from neuron_migrate.model import Finding

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class GitError(Exception):
    """git is missing, the folder is no repository or REV is unknown (exit code 2)."""


@dataclass
class Changes:
    root: Path
    # absolute path -> changed line numbers (1-based); a path in `whole` is new in all its lines
    lines: dict[Path, set[int]] = field(default_factory=dict)
    whole: set[Path] = field(default_factory=set)

    def changed(self, path: Path, line: int) -> bool:
        path = path.resolve()
        return path in self.whole or line in self.lines.get(path, ())

    def touched(self, path: Path) -> bool:
        path = path.resolve()
        return path in self.whole or bool(self.lines.get(path))


def _git(args: list[str], cwd: Path) -> str:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
        )
    except FileNotFoundError:
        raise GitError("--since needs git, and git is not installed") from None
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.strip() or 'failed'}")
    return proc.stdout


def parse_diff(text: str, root: Path) -> dict[Path, set[int]]:
    """Added line numbers of the new side of each file in a `git diff --unified=0`."""
    out: dict[Path, set[int]] = {}
    current: set[int] | None = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            if name == "/dev/null":
                current = None
                continue
            name = name[2:] if name.startswith("b/") else name
            current = out.setdefault((root / name).resolve(), set())
        elif line.startswith("@@") and current is not None:
            found = _HUNK.match(line)
            if found:
                start, count = int(found.group(1)), int(found.group(2) or 1)
                current.update(range(start, start + count))
    return out


def changes_since(rev: str, cwd: Path) -> Changes:
    root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    base = _git(["merge-base", rev, "HEAD"], cwd).strip()
    diff = _git(
        ["diff", "--unified=0", "--no-color", "--no-ext-diff", "-M", "--relative=", base, "--"],
        root,
    )
    changes = Changes(root, parse_diff(diff, root))
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], root)
    changes.whole = {(root / name).resolve() for name in untracked.split("\0") if name}
    return changes


def filter_findings(
    findings: list[Finding], changes: Changes, notebook_lines=None
) -> list[Finding]:
    """The findings on changed lines. A notebook finding is kept when its file changed at all,
    unless `notebook_lines(finding)` maps it to its line in the notebook's JSON text."""
    out = []
    for finding in findings:
        path = Path(finding.path)
        if finding.cell is not None:
            line = notebook_lines(finding) if notebook_lines else None
            keep = changes.changed(path, line) if line else changes.touched(path)
        else:
            lines = {finding.span.line, finding.span.end_line}  # the lines noqa reads, too
            keep = any(changes.changed(path, n) for n in lines)
        if keep:
            out.append(finding)
    return out
