"""Gradual adoption: a baseline file records today's findings; later runs report only new ones.

A finding is matched on its path (relative to the baseline file's folder), its code and its
source line with whitespace normalised, never on its line number, so edits elsewhere in the
file that shift lines do not break the baseline. The same line may be recorded several times
(`count`); a finding beyond the recorded count is new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from neuron_migrate.model import Finding

VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be used (exit code 2)."""


Key = tuple[str, str, str]


def normalise(line: str) -> str:
    return " ".join(line.split())


def _path_key(path: str, base: Path) -> str:
    try:
        return Path(os.path.relpath(Path(path).resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


def key(finding: Finding, base: Path) -> Key:
    return (_path_key(finding.path, base), finding.code, normalise(finding.source_line))


def write(file: Path, findings: list[Finding]) -> int:
    """Record the findings in `file`; returns how many were recorded."""
    counts = Counter(key(f, file.parent) for f in findings)
    entries = [
        {"path": path, "code": code, "line": line, "count": n}
        for (path, code, line), n in sorted(counts.items())
    ]
    data = {"tool": "neuron-migrate", "version": VERSION, "findings": entries}
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"{file}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(findings)


def load(file: Path) -> Counter[Key]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{file}: baseline file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{file}: cannot read the baseline: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{file}: not a baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{file}: not a neuron-migrate baseline (no `findings` list)")
    counts: Counter[Key] = Counter()
    for i, entry in enumerate(data["findings"]):
        try:
            k = (str(entry["path"]), str(entry["code"]), normalise(str(entry["line"])))
            counts[k] += int(entry.get("count", 1))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BaselineError(f"{file}: findings[{i}]: needs path, code and line") from None
    return counts


def new_findings(findings: list[Finding], file: Path) -> tuple[list[Finding], int]:
    """The findings not in the baseline, and how many were matched (left out)."""
    remaining = load(file)
    out = []
    matched = 0
    for finding in findings:
        k = key(finding, file.parent)
        if remaining[k] > 0:
            remaining[k] -= 1
            matched += 1
        else:
            out.append(finding)
    return out, matched
