"""The plain pieces every project-file format shares: what a check found (`Hit`), text edits,
and lines with their offsets."""

from __future__ import annotations

from dataclasses import dataclass

from neuron_migrate.model import Safety


@dataclass
class Hit:
    code: str
    line: int  # 1-based
    col: int  # 1-based, first character
    end_col: int  # 1-based, the character after the last (same line)
    message: str
    safety: Safety | None = None
    # the new text of the reported part for machine formats; "" means it is removed
    replacement: str | None = None
    # what the format module needs to apply the fix (None: no fix)
    edit: object = None


@dataclass(frozen=True)
class TextEdit:
    start: int  # offsets into the text
    end: int
    new: str


class ProjectParseError(Exception):
    """A file the format cannot read; reported once as NM000 with the reason."""

    def __init__(self, message: str, line: int = 1, col: int = 1):
        super().__init__(message)
        self.line = line
        self.col = col


class Lines:
    """The lines of a text with their start offsets; `\\r\\n` and `\\n` both end a line."""

    def __init__(self, text: str):
        self.text = text
        self.raw = text.splitlines(keepends=True)
        self.starts = []
        offset = 0
        for raw in self.raw:
            self.starts.append(offset)
            offset += len(raw)

    def __len__(self) -> int:
        return len(self.raw)

    def content(self, number: int) -> str:
        """Line `number` (1-based) without its line ending."""
        if not 0 < number <= len(self.raw):
            return ""
        return self.raw[number - 1].rstrip("\r\n")

    def offset(self, number: int, col: int = 1) -> int:
        return self.starts[number - 1] + col - 1

    def whole_line(self, number: int) -> TextEdit:
        """An edit that removes line `number` with its line ending."""
        start = self.starts[number - 1]
        return TextEdit(start, start + len(self.raw[number - 1]), "")


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (overlapping ones after the first are skipped)."""
    out = []
    last = 0
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end)):
        if edit.start < last:
            continue
        out.append(text[last : edit.start])
        out.append(edit.new)
        last = edit.end
    out.append(text[last:])
    return "".join(out)
