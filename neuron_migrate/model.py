"""The plain data that flows between the engine, the fixer and the reporters."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Safety(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Span:
    """1-based line and column of the first character, and of the character after the last."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass
class Fix:
    safety: Safety
    # The replacement text of the reported node (or of its statement), for machine formats.
    replacement: str | None = None


@dataclass
class Finding:
    path: str
    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    fix: Fix | None = None
    source_line: str = ""
    # where the finding sits in a notebook ("cell 3"), None for plain files
    cell: int | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.span.line, self.span.column, self.code)

    @property
    def location(self) -> str:
        """`path:line:col`, or `path:cell N:line:col` in a notebook (ruff's style)."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.span.line}:{self.span.column}"


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    # new text when --fix/--diff produced a change; None when nothing changed
    fixed_source: str | None = None
    original_source: str | None = None
    applied: int = 0
    written: bool = False
    error: str | None = None
    # modules the applied fixes import from the user's project: module name -> its source, written
    # once beside the fixed files when missing (see workspace/companions.py)
    companions: dict[str, str] = field(default_factory=dict)
    # things the user should know that are not findings (a cell left unchecked, a noqa comment
    # naming an unknown code); printed as `warning:` lines on stderr
    warnings: list[str] = field(default_factory=list)
