"""`--statistics`: how many findings each rule has, and how many of them `--fix` would fix."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from neuron_migrate.model import Finding, Safety


@dataclass(frozen=True)
class Row:
    code: str
    name: str
    count: int
    fixable: int  # with the fixes in force (safe, plus unsafe with --unsafe-fixes)
    safe: int
    unsafe: int


def rows(findings: list[Finding], unsafe_fixes: bool) -> list[Row]:
    names = {f.code: f.name for f in findings}
    total = Counter(f.code for f in findings)
    safe = Counter(f.code for f in findings if f.fix and f.fix.safety is Safety.SAFE)
    unsafe = Counter(f.code for f in findings if f.fix and f.fix.safety is Safety.UNSAFE)
    out = [
        Row(
            code,
            names[code],
            total[code],
            safe[code] + (unsafe[code] if unsafe_fixes else 0),
            safe[code],
            unsafe[code],
        )
        for code in total
    ]
    out.sort(key=lambda r: (-r.count, r.code))
    return out


def render_text(findings: list[Finding], unsafe_fixes: bool) -> str:
    table = rows(findings, unsafe_fixes)
    if not table:
        return ""
    width = max(len(str(r.count)) for r in table)
    lines = []
    for r in table:
        mark = "[*]" if r.fixable == r.count else ("[-]" if r.fixable else "   ")
        if r.fixable:
            fixable = f"{r.fixable} fixable"
        elif r.unsafe:
            fixable = f"{r.unsafe} fixable with --unsafe-fixes"
        else:
            fixable = "manual"
        lines.append(f"{r.count:>{width}}\t{r.code}\t{mark} {r.name} ({fixable})")
    return "\n".join(lines) + "\n"


def render_json(findings: list[Finding], unsafe_fixes: bool) -> str:
    data = [
        {
            "code": r.code,
            "name": r.name,
            "count": r.count,
            "fixable": r.fixable,
            "safe": r.safe,
            "unsafe": r.unsafe,
        }
        for r in rows(findings, unsafe_fixes)
    ]
    return json.dumps(data, indent=2) + "\n"
