"""Counts that several formats print."""

from __future__ import annotations

from dataclasses import dataclass

from neuron_migrate.model import Finding, Safety


@dataclass(frozen=True)
class Counts:
    findings: int
    files: int
    safe: int
    unsafe: int


def count(findings: list[Finding]) -> Counts:
    return Counts(
        findings=len(findings),
        files=len({f.path for f in findings}),
        safe=sum(1 for f in findings if f.fix and f.fix.safety is Safety.SAFE),
        unsafe=sum(1 for f in findings if f.fix and f.fix.safety is Safety.UNSAFE),
    )


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
