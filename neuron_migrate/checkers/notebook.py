"""Jupyter notebooks (`.ipynb`): check and fix the code cells; keep everything else byte-for-byte.

The code cells are joined into one Python text (so an import in cell 1 resolves a call in
cell 5), each cell after a marker comment line; IPython magics (`%`, `!`, `?` lines at the
start of a logical line) become placeholder comments that are put back after fixing, so they
never break parsing. A line magic whose argument is a Python statement (`%time xm.mark_step()`)
gives the engine that statement, with a marker comment that puts the magic back. A cell magic
whose body is Python in IPython (`%%time`, `%%timeit`, `%%capture`, `%%prun`, `%%debug`,
`%%python`, ... and `%%writefile x.py`) is Python below its first line; a `%%bash` / `%%sh` /
`%%script bash` cell goes to the shell-launcher checker; any other cell is not checked and is
named in a warning, and the Python names it may use keep their imports (a trailer of bare names
after the last cell). Findings point to `cell N, line M` (N counts every cell of the notebook
from 1, as they appear, M the line in the cell).

Fixed cells are written back by replacing the raw JSON text of just those cells' `source`
values, encoded in the notebook's own style (indent, line endings, ASCII escapes or not); the
outputs, metadata and all other bytes stay as they were.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field, replace
from json.decoder import scanstring
from pathlib import Path

from neuron_migrate.checkers.textio import Decoded, DecodeProblem
from neuron_migrate.model import FileResult, Finding, Span

MARKER = "#nm-cell:{}"
_MARKER_RE = re.compile(r"^#nm-cell:(\d+)$")
_PLACEHOLDER = "#nm-magic:{}"
_PLACEHOLDER_RE = re.compile(r"^[ \t]*(?:pass  )?#nm-magic:(\d+)$")
_WS = re.compile(r"[ \t\n\r]*")
_HELP = re.compile(r"^[ \t]*(?:\?{1,2}[\w.]*|[\w.]+\?{1,2})[ \t]*$")
_LINE_MARK = "  #nm-line:{}"
_LINE_MARK_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<code>.*?)  #nm-line:(?P<n>\d+)$")
_USES = "#nm-uses"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# IPython cell magics whose body is Python run by the kernel (ruff's list, plus %%script python)
PYTHON_CELL_MAGICS = frozenset(
    {"capture", "debug", "prun", "pypy", "python", "python2", "python3", "time", "timeit"}
)
SHELL_CELL_MAGICS = frozenset({"bash", "sh"})
# cell magics of another language that cannot name a Python variable
OTHER_LANGUAGE_MAGICS = frozenset(
    {"html", "javascript", "js", "latex", "markdown", "svg", "perl", "ruby", "file"}
)
# line magics whose argument is a Python statement, with their options that take a value
PYTHON_LINE_MAGICS = {"time": "", "timeit": "nrp", "prun": "DTls", "debug": "b"}
_ASSIGN_MAGIC = re.compile(r"^[ \t]*[\w.,\[\] \t]+=[ \t]*[!%]")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    pass


# ---- the raw JSON: where each cell's source is ---------------------------------------------


def _skip(s: str, i: int) -> int:
    return _WS.match(s, i).end()


def _members(s: str, i: int):
    """(key, start, end) of each member value of the object at s[i] == '{'."""
    if s[i] != "{":
        raise NotebookError("expected a JSON object")
    i = _skip(s, i + 1)
    if s[i] == "}":
        return
    while True:
        if s[i] != '"':
            raise NotebookError("expected a key")
        key, i = scanstring(s, i + 1)
        i = _skip(s, i)
        i = _skip(s, i + 1)  # the colon
        _, end = _DECODER.raw_decode(s, i)
        yield key, i, end
        i = _skip(s, end)
        if s[i] == ",":
            i = _skip(s, i + 1)
            continue
        return


def _items(s: str, i: int):
    """(start, end) of each item of the array at s[i] == '['."""
    if s[i] != "[":
        raise NotebookError("expected a JSON array")
    i = _skip(s, i + 1)
    if s[i] == "]":
        return
    while True:
        _, end = _DECODER.raw_decode(s, i)
        yield i, end
        i = _skip(s, end)
        if s[i] == ",":
            i = _skip(s, i + 1)
            continue
        return


def source_spans(raw: str) -> list[tuple[int, int] | None]:
    """For each cell, the (start, end) of its `source` value in the raw text."""
    start = _skip(raw, 0)
    for key, begin, _end in _members(raw, start):
        if key == "cells":
            out = []
            for cell_start, _cell_end in _items(raw, begin):
                span = None
                for ckey, vstart, vend in _members(raw, cell_start):
                    if ckey == "source":
                        span = (vstart, vend)
                out.append(span)
            return out
    return []


# ---- code cells to one Python text and back --------------------------------------------------


def _source_text(source) -> str:
    if source is None or isinstance(source, str):
        return source or ""
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise NotebookError("not a notebook: a cell's `source` is not text")


def _split(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _logical_starts(lines: list[str]) -> list[bool]:
    """For each line: does it start a logical line (not inside brackets, a string or after a
    backslash)? A light scanner: good enough to tell magics from continuation lines."""
    starts = []
    depth = 0
    quote: str | None = None
    continued = False
    for line in lines:
        starts.append(depth == 0 and quote is None and not continued)
        continued = False
        i, n = 0, len(line)
        while i < n:
            ch = line[i]
            if quote is not None:
                if ch == "\\":
                    i += 2
                    continue
                if line.startswith(quote, i):
                    i += len(quote)
                    quote = None
                    continue
                if len(quote) == 1 and ch == "\n":
                    quote = None
                i += 1
                continue
            if ch == "#":
                break
            if ch in "\"'":
                quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
                i += len(quote)
                continue
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth = max(0, depth - 1)
            elif ch == "\\" and line[i + 1 : i + 2] in ("\n", ""):
                continued = True
            i += 1
    return starts


def _is_magic(line: str) -> bool:
    stripped = line.lstrip(" \t")
    if stripped.startswith(("%", "!")):
        return True
    body = line.rstrip("\r\n")
    return bool(_HELP.match(body)) or bool(_ASSIGN_MAGIC.match(body))


@dataclass
class Cell:
    index: int  # 1-based over every cell of the notebook
    text: str  # the original source text
    lines: list[str]  # the Python lines given to the engine (magics replaced), each with \n
    magics: dict[int, str] = field(default_factory=dict)  # placeholder number -> original line
    trailing_newline: bool = True
    # line-magic number -> the magic before its statement ("%timeit -n 10 ")
    line_magics: dict[int, str] = field(default_factory=dict)
    # magic lines left as placeholders: Python names they may use keep their imports
    opaque: list[str] = field(default_factory=list)


@dataclass
class ShellCell:
    index: int
    first: str  # the `%%bash` line, with its line ending
    body: str


@dataclass
class Joined:
    text: str
    cells: list[Cell]
    # line of the joined text (1-based) -> (cell index, line in cell); marker lines are absent
    where: dict[int, tuple[int, int]]
    shell: list[ShellCell] = field(default_factory=list)
    # cells not checked: (cell index, why), for the warning
    unchecked: list[tuple[int, str]] = field(default_factory=list)
    # the first line of the trailer of names used by unchecked code (0: no trailer)
    uses_line: int = 0


def _cell_magic(first: str) -> tuple[str, list[str]]:
    """The name and arguments of a `%%name args` first line."""
    parts = first.split()
    return parts[0][2:], parts[1:]


def _line_statement(line: str) -> tuple[str, str] | None:
    """(magic, statement) of `%time stmt` / `%timeit -n 10 stmt` / ..., when the statement is
    one line of Python; None otherwise."""
    body = line.rstrip("\r\n")
    stripped = body.lstrip(" \t")
    found = re.match(r"%(\w+)", stripped)
    if found is None or found.group(1) not in PYTHON_LINE_MAGICS or body.endswith("\\"):
        return None
    takes_value = PYTHON_LINE_MAGICS[found.group(1)]
    rest = stripped[found.end() :]
    if rest and not rest[0].isspace():
        return None
    while True:
        option = re.match(r"\s+(-(\w)(\S*))", rest)
        if option is None:
            break
        rest = rest[option.end() :]
        if option.group(2) in takes_value and not option.group(3):
            value = re.match(r"\s+\S+", rest)
            rest = rest[value.end() :] if value else rest
    statement = rest.strip(" \t")
    if not statement:
        return None
    try:
        import ast

        ast.parse(statement)
    except (SyntaxError, ValueError):
        return None
    return stripped[: len(stripped) - len(statement)], statement


def _is_python_cell_magic(first: str) -> bool:
    name, args = _cell_magic(first)
    if name == "writefile":
        return bool(args) and args[-1].endswith(".py")
    if name == "script":
        return bool(args) and re.sub(r"[0-9.]+$", "", args[0].rsplit("/", 1)[-1]) == "python"
    return name in PYTHON_CELL_MAGICS


def _is_shell_cell_magic(first: str) -> bool:
    name, args = _cell_magic(first)
    if name == "script":
        return bool(args) and args[0].rsplit("/", 1)[-1] in SHELL_CELL_MAGICS
    return name in SHELL_CELL_MAGICS


def _python_cell(index: int, text: str, counter: list[int]) -> Cell | None:
    lines = _split(text)
    first = lines[0].strip() if lines else ""
    magics: dict[int, str] = {}
    line_magics: dict[int, str] = {}
    opaque: list[str] = []
    out: list[str] = []
    body = lines
    if first.startswith("%%"):
        if not _is_python_cell_magic(first):
            return None
        counter[0] += 1
        magics[counter[0]] = lines[0]
        out.append(_PLACEHOLDER.format(counter[0]) + "\n")
        body = lines[1:]
    starts = _logical_starts(body)
    in_magic = False
    for line, starts_here in zip(body, starts):
        statement = _line_statement(line) if starts_here and not in_magic else None
        if statement is not None:
            counter[0] += 1
            magic, code = statement
            line_magics[counter[0]] = magic
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            out.append(f"{indent}{code}{_LINE_MARK.format(counter[0])}\n")
        elif (starts_here and _is_magic(line)) or in_magic:
            counter[0] += 1
            magics[counter[0]] = line
            if not _HELP.match(line.rstrip("\r\n")):
                opaque.append(line)
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            # an indented magic stands for a statement (it may be a block's only one); the
            # continuation lines of a magic are comments
            keep = f"{indent}pass  " if indent and not in_magic else ""
            out.append(f"{keep}{_PLACEHOLDER.format(counter[0])}\n")
            in_magic = line.rstrip("\r\n").endswith("\\")
        else:
            out.append(line if line.endswith("\n") else line + "\n")
    return Cell(
        index,
        text,
        out,
        magics,
        trailing_newline=text.endswith("\n"),
        line_magics=line_magics,
        opaque=opaque,
    )


def _names_used(opaque: str) -> set[str]:
    """Python names a magic line may read: `{expr}` and `$name` in a shell line (`!cmd`),
    any name after a `%magic`."""
    stripped = opaque.lstrip(" \t")
    if "!" in stripped.split("=", 1)[-1][:2] or stripped.startswith("!"):
        inner = " ".join(re.findall(r"\{([^{}]*)\}", stripped))
        inner += " " + " ".join(re.findall(r"\$([A-Za-z_]\w*)", stripped))
        return set(_IDENTIFIER.findall(inner))
    return set(_IDENTIFIER.findall(stripped.lstrip("%")))


def _imported_names(text: str) -> set[str]:
    """The names bound by import lines (roughly: every word of a line that imports)."""
    names: set[str] = set()
    for line in text.splitlines():
        if re.match(r"[ \t]*(?:from[ \t]+\S+[ \t]+)?import[ \t(]", line):
            names.update(_IDENTIFIER.findall(line.split("#", 1)[0]))
    return names


def _language(nb: dict) -> str:
    meta = nb.get("metadata") or {}
    info = meta.get("language_info") or {}
    kernel = meta.get("kernelspec") or {}
    return str(info.get("name") or kernel.get("language") or "python").lower()


def join(nb: dict) -> Joined:
    cells: list[Cell] = []
    shell: list[ShellCell] = []
    unchecked: list[tuple[int, str]] = []
    used: set[str] = set()
    counter = [0]
    if _language(nb) == "python":
        for index, cell in enumerate(nb.get("cells") or [], start=1):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            try:
                source = _source_text(cell.get("source"))
            except NotebookError:
                raise NotebookError(f"cell {index}: `source` is not text") from None
            made = _python_cell(index, source, counter)
            if made is not None:
                cells.append(made)
                for line in made.opaque:
                    used |= _names_used(line)
                continue
            first, _, body = source.partition("\n")
            if _is_shell_cell_magic(first.strip()):
                shell.append(ShellCell(index, first + "\n", body))
                continue
            unchecked.append((index, first.strip().split()[0]))
            if _cell_magic(first.strip())[0] not in OTHER_LANGUAGE_MAGICS:
                used |= set(_IDENTIFIER.findall(body))
    parts: list[str] = []
    where: dict[int, tuple[int, int]] = {}
    line = 0
    for cell in cells:
        parts.append(MARKER.format(cell.index) + "\n")
        line += 1
        for number, text in enumerate(cell.lines, start=1):
            parts.append(text)
            line += 1
            where[line] = (cell.index, number)
    joined = Joined("".join(parts), cells, where, shell, unchecked)
    kept = sorted(used & _imported_names(joined.text))
    if kept and cells:
        # code the engine does not see may use these imports: bare names after the last cell
        # keep them used (the trailer is dropped from findings and from the fixed cells)
        joined.uses_line = line + 1
        joined.text += _USES + "\n" + "".join(f"{name}\n" for name in kept)
    return joined


def split_back(joined: Joined, fixed: str) -> dict[int, str]:
    """The fixed text of each cell (magics restored), by cell index."""
    chunks: dict[int, list[str]] = {}
    order: list[int] = []
    current: list[str] | None = None
    for line in fixed.splitlines(keepends=True):
        if line.rstrip("\r\n") == _USES:
            break
        found = _MARKER_RE.match(line.rstrip("\r\n"))
        if found:
            order.append(int(found.group(1)))
            current = chunks.setdefault(int(found.group(1)), [])
        elif current is None:
            if line.strip():
                raise NotebookError("fixed code landed before the first cell")
        else:
            current.append(line)
    if order != [c.index for c in joined.cells]:
        raise NotebookError("the fixes moved code across cells")
    out = {}
    for cell in joined.cells:
        lines = []
        for line in chunks[cell.index]:
            found = _PLACEHOLDER_RE.match(line.rstrip("\r\n"))
            marked = _LINE_MARK_RE.match(line.rstrip("\r\n"))
            if marked and int(marked.group("n")) in cell.line_magics:
                magic = cell.line_magics[int(marked.group("n"))]
                lines.append(marked.group("indent") + magic + marked.group("code") + "\n")
            elif found and int(found.group(1)) in cell.magics:
                original = cell.magics[int(found.group(1))]
                lines.append(original if original.endswith("\n") else original + "\n")
            else:
                lines.append(line)
        text = "".join(lines)
        if not cell.trailing_newline and text.endswith("\n"):
            text = text[:-1]
        out[cell.index] = text
    return out


# ---- re-encoding a cell's source in the notebook's style -----------------------------------


def _style(raw: str) -> tuple[str, str, bool]:
    newline = "\r\n" if "\r\n" in raw else "\n"
    second = raw.split("\n", 2)[1] if raw.count("\n") >= 1 else ""
    unit = second[: len(second) - len(second.lstrip(" \t"))] or " "
    ensure_ascii = bool(re.search(r"\\u[0-9a-fA-F]{4}", raw)) and raw.isascii()
    return newline, unit, ensure_ascii


def _line_indent(raw: str, pos: int) -> str:
    start = raw.rfind("\n", 0, pos) + 1
    line = raw[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def encode_source(raw: str, span: tuple[int, int], text: str) -> str:
    newline, unit, ensure_ascii = _style(raw)
    old = raw[span[0] : span[1]]
    if old.startswith('"'):
        return json.dumps(text, ensure_ascii=ensure_ascii)
    items = [json.dumps(line, ensure_ascii=ensure_ascii) for line in _split(text)]
    if not items:
        return "[]"
    positions = list(_items(raw, span[0]))
    if positions and "\n" not in old:
        return "[" + ", ".join(items) + "]"
    if positions:
        item_indent = _line_indent(raw, positions[0][0])
        close_indent = _line_indent(raw, span[1] - 1)
    else:
        close_indent = _line_indent(raw, span[0])
        item_indent = close_indent + unit
    sep = "," + newline + item_indent
    return "[" + newline + item_indent + sep.join(items) + newline + close_indent + "]"


def rewrite(raw: str, new_sources: dict[int, str]) -> str:
    """The raw notebook text with the `source` of the given cells (1-based) replaced."""
    spans = source_spans(raw)
    edits = []
    for index, text in new_sources.items():
        span = spans[index - 1]
        if span is None:
            raise NotebookError(f"cell {index} has no source")
        edits.append((span, encode_source(raw, span, text)))
    out = raw
    for (start, end), value in sorted(edits, reverse=True):
        out = out[:start] + value + out[end:]
    nb = json.loads(out)
    for index, text in new_sources.items():
        if _source_text(nb["cells"][index - 1].get("source")) != text:
            raise NotebookError(f"cell {index} did not round-trip")
    return out


# ---- checking -------------------------------------------------------------------------------


def _map(finding: Finding, joined: Joined) -> Finding:
    span = finding.span
    start = joined.where.get(span.line)
    if start is None:  # a marker line (a syntax error at a cell's end): the next cell's first
        later = [n for n in joined.where if n > span.line]
        start = joined.where[min(later)] if later else (joined.cells[-1].index, 1)
        return replace(finding, cell=start[0], span=Span(start[1], 1, start[1], 1))
    end = joined.where.get(span.end_line, start)
    end_line = end[1] if end[0] == start[0] else start[1]
    end_column = span.end_column if end[0] == start[0] else span.column + 1
    return replace(finding, cell=start[0], span=Span(start[1], span.column, end_line, end_column))


def _joined_keys(keys: frozenset, joined: Joined) -> frozenset:
    """Findings named by cell and line (Options.only) as the joined text names them (a
    magic's placeholder keeps the columns of the line it stands for)."""
    line_of = {where: line for line, where in joined.where.items()}
    out = set()
    for code, cell, line, column in keys:
        if (cell, line) in line_of:
            out.add((code, 0, line_of[(cell, line)], column))
    return frozenset(out)


def _load(text: str) -> dict:
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a notebook: invalid JSON: {exc}") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not a notebook: no `cells` list")
    return nb


def check_notebook_source(text: str, path: str, job, relative: str | None = None) -> FileResult:
    """Check (and with fix/diff options, fix) a notebook's JSON text. No file I/O; the fixed
    notebook's JSON text is `fixed_source`."""
    from neuron_migrate.checkers.base import problem
    from neuron_migrate.checkers.python import check_source
    from neuron_migrate.engine.noqa import exempt, file_exemptions

    result = FileResult(path=path, original_source=text)
    try:
        nb = _load(text)
        joined = join(nb)
    except NotebookError as exc:
        result.findings = [problem(path, str(exc))]
        return result
    if _language(nb) != "python":
        result.warnings.append(f"{path}: a {_language(nb)} notebook: not checked")
    for index, magic in joined.unchecked:
        result.warnings.append(f"{path}:cell {index}: a `{magic}` cell: not checked")
    changed: dict[int, str] = {}
    if joined.cells:
        if job.options.only is not None:
            job = replace(
                job, options=replace(job.options, only=_joined_keys(job.options.only, joined))
            )
        inner = check_source(joined.text, path, job, relative)
        kept = [f for f in inner.findings if not joined.uses_line or f.span.line < joined.uses_line]
        result.findings = [_map(f, joined) for f in kept]
        result.warnings += [_map_warning(w, path, joined) for w in inner.warnings]
        result.error = inner.error
        if inner.fixed_source is not None:
            try:
                sources = split_back(joined, inner.fixed_source)
                changed = {
                    index: new
                    for index, new in sources.items()
                    if new != next(c.text for c in joined.cells if c.index == index)
                }
                result.applied = inner.applied if changed else 0
            except (NotebookError, ValueError, KeyError, IndexError) as exc:
                result.error = f"not fixed: {exc}"
    exempted = file_exemptions(joined.text + "".join(c.body + "\n" for c in joined.shell))
    for cell in joined.shell:
        findings, fixed, applied = _check_shell_cell(cell, path, job, relative)
        result.findings.extend(f for f in findings if not exempt(exempted, f.code))
        if fixed is not None:
            changed[cell.index] = fixed
            result.applied += applied
    result.findings.sort(key=Finding.sort_key)
    if changed and (result.error is None or not result.error.startswith("not fixed")):
        try:
            result.fixed_source = rewrite(text, changed)
        except (NotebookError, ValueError, KeyError, IndexError) as exc:
            result.error = f"not fixed: {exc}"
            result.applied = 0
    return result


def _map_warning(warning: str, path: str, joined: Joined) -> str:
    """`path:LINE: text` of the joined code as `path:cell N:LINE: text`."""
    head, _, rest = warning[len(path) + 1 :].partition(": ")
    if not head.isdigit() or int(head) not in joined.where:
        return warning
    cell, line = joined.where[int(head)]
    return f"{path}:cell {cell}:{line}: {rest}"


def _check_shell_cell(cell: ShellCell, path: str, job, relative: str | None):
    """A `%%bash` cell through the shell-launcher checker: its findings (lines counted in the
    cell), its fixed text or None, and the number of fixes."""
    from neuron_migrate.checkers.project import check_format_text

    inner = check_format_text(cell.body, path, job, relative or path, "shell")
    findings = [
        replace(
            f,
            cell=cell.index,
            span=Span(f.span.line + 1, f.span.column, f.span.end_line + 1, f.span.end_column),
        )
        for f in inner.findings
    ]
    fixed = cell.first + inner.fixed_source if inner.fixed_source is not None else None
    return findings, fixed, inner.applied


class NotebookKind:
    """Jupyter notebooks (.ipynb): JSON in UTF-8, code cells checked as one Python module."""

    name = "notebook"

    def wants(self, data: bytes, job, relative: str) -> bool:
        return True  # the cells' joined source is prefiltered inside check_notebook_source

    def decode(self, data: bytes) -> Decoded:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DecodeProblem(f"cannot decode as utf-8: {exc}") from None
        # "utf-8-sig" writes the BOM back only when the file had one
        return Decoded(text, "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")

    def check_text(self, text: str, path: str, job, relative: str) -> FileResult:
        return check_notebook_source(text, path, job, relative)


NOTEBOOK = NotebookKind()


# ---- diffs and line look-ups ----------------------------------------------------------------


def cell_sources(raw: str) -> list[str]:
    return [_source_text(c.get("source")) for c in json.loads(raw).get("cells", [])]


def cell_diff(original: str, fixed: str, path: str) -> str:
    """Unified diffs of the cells that changed, each headed `path:cell N`."""
    out = []
    for index, (old, new) in enumerate(zip(cell_sources(original), cell_sources(fixed)), 1):
        if old == new:
            continue
        old_lines = [x if x.endswith("\n") else x + "\n" for x in _split(old)]
        new_lines = [x if x.endswith("\n") else x + "\n" for x in _split(new)]
        name = f"{path}:cell {index}"
        out.extend(difflib.unified_diff(old_lines, new_lines, fromfile=name, tofile=name))
    return "".join(out)


def json_line_of(raw: str, cell: int, line: int) -> int | None:
    """The line of the notebook's JSON text that holds line `line` of cell `cell`, when the
    source is a list with one item per JSON line (as Jupyter writes it)."""
    try:
        span = source_spans(raw)[cell - 1]
    except (NotebookError, IndexError, ValueError):
        return None
    if span is None or raw[span[0]] != "[":
        return None
    items = list(_items(raw, span[0]))
    if not 0 < line <= len(items):
        return None
    return raw.count("\n", 0, items[line - 1][0]) + 1


def json_line_of_finding(finding: Finding) -> int | None:
    if finding.cell is None:
        return None
    try:
        raw = Path(finding.path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    return json_line_of(raw, finding.cell, finding.span.line)
