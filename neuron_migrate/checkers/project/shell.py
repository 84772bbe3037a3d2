"""Shell launchers (*.sh) and Dockerfiles (RUN / ENV): NM904 launcher-script, the pins of
`pip install` commands (NM901 / NM902), instance types (NM905).

A small shell reader: continued lines are joined into one command line that remembers where each
character came from; commands are split at `;`, `&&`, `||`, `|`, `&`; words keep their quotes
and their positions. Nothing is run or expanded."""

from __future__ import annotations

import re
from dataclasses import dataclass

from neuron_migrate.checkers.project import configs, deps, facts
from neuron_migrate.checkers.project.core import Hit, Lines, TextEdit, apply_edits
from neuron_migrate.model import Safety

TRIGGER = re.compile(
    rb"XLA_|PJRT_|NEURON_|neuron_parallel_compile|optimum-cli|xla|python|trn1|inf1|inf2|"
    rb"torch|pip"
)
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PYTHON = re.compile(r"(^|/)python[0-9.]*$")
_WRAPPERS = {"sudo", "exec", "time", "nohup", "nice", "stdbuf", "srun", "mpirun"}
_PIP_VALUE_OPTIONS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--trusted-host",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--upgrade-strategy",
    "--src",
    "--cache-dir",
    "--log",
    "--progress-bar",
    "--no-binary",
    "--only-binary",
}
_XLA_SIGNS = re.compile(r"XLA_|PJRT_|neuron_parallel_compile|torch_xla")


@dataclass
class Word:
    text: str  # as written, quotes included
    start: int  # index into the logical line
    end: int

    @property
    def value(self) -> str:
        text = self.text
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
            return text[1:-1]
        return text


class Logical:
    """One command line made of continued physical lines, with each character's position."""

    def __init__(self, lines: Lines, first: int, last: int, skip: int = 0):
        self.first, self.last = first, last
        chars: list[str] = []
        where: list[tuple[int, int]] = []
        for number in range(first, last + 1):
            text = lines.content(number)
            start = skip if number == first else 0
            if number < last and text.rstrip().endswith("\\"):
                text = text.rstrip()[:-1]
            for col in range(start, len(text)):
                chars.append(text[col])
                where.append((number, col + 1))
            chars.append(" ")
            where.append((number, len(text) + 1))
        self.text = "".join(chars)
        self.where = where

    def pos(self, index: int) -> tuple[int, int]:
        return self.where[min(index, len(self.where) - 1)]


def _words(text: str) -> list[list[Word]]:
    """Simple commands of a command line, as words; a comment ends the line."""
    commands: list[list[Word]] = [[]]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == "#":
            break
        if c in ";&|":
            j = i + 1
            while j < n and text[j] in "&|":
                j += 1
            commands.append([])
            i = j
            continue
        start = i
        while i < n and not text[i].isspace() and text[i] not in ";&|":
            if text[i] in "\"'":
                close = text.find(text[i], i + 1)
                i = n if close == -1 else close + 1
            elif text[i] == "\\":
                i += 2
            else:
                i += 1
        commands[-1].append(Word(text[start:i], start, i))
    return [c for c in commands if c]


def _logicals(lines: Lines, dockerfile: bool):
    """(kind, Logical) for each command line: kind is 'shell', 'env' or 'other'."""
    number = 1
    total = len(lines)
    while number <= total:
        text = lines.content(number)
        last = number
        while last < total and lines.content(last).rstrip().endswith("\\"):
            last += 1
        kind, skip = "shell", 0
        if dockerfile:
            found = re.match(r"^\s*([A-Za-z]+)\s+", text)
            instruction = found.group(1).upper() if found else ""
            kind = {"RUN": "shell", "ENV": "env"}.get(instruction, "other")
            skip = found.end() if found else 0
            if kind == "shell" and text[skip:].lstrip().startswith("["):
                kind = "other"  # exec form: JSON, not a shell command
        yield kind, Logical(lines, number, last, skip)
        number = last + 1


@dataclass
class _Ctx:
    lines: Lines
    hits: list
    xla_file: bool
    multiprocess_file: bool


def _hit(
    ctx: _Ctx, logical: Logical, word: Word, message: str, safety=None, edit=None, replacement=None
) -> None:
    line, col = logical.pos(word.start)
    end_line, end_col = logical.pos(word.end - 1)
    end = end_col + 1 if end_line == line else len(ctx.lines.content(line)) + 1
    ctx.hits.append(
        Hit(
            "NM904",
            line,
            col,
            end,
            message,
            safety if edit else None,
            replacement if edit else None,
            edit,
        )
    )


def _variable_message(name: str) -> tuple[str, Safety]:
    if name in facts.BF16_VARIABLES:
        return (
            f"`{name}` made PyTorch/XLA compute in bfloat16 (float64 too); TorchNeuron ignores "
            "it: cast explicitly (`model.to(torch.bfloat16)`) or use "
            '`torch.autocast("neuron", dtype=torch.bfloat16)`, then drop the variable',
            Safety.UNSAFE,
        )
    return (
        f"`{name}` configures PyTorch/XLA and has no meaning on TorchNeuron: drop it",
        Safety.SAFE,
    )


def _whole_lines(lines: Lines, logical: Logical) -> TextEdit:
    start = lines.starts[logical.first - 1]
    end_edit = lines.whole_line(logical.last)
    return TextEdit(start, end_edit.end, "")


def _assignments(ctx: _Ctx, logical: Logical, words: list[Word], whole: bool) -> None:
    """XLA variables set by `export A=1 B=2`, `A=1` or Docker `ENV A=1`: removable as a whole
    line when every word of the line sets an XLA variable."""
    names = []
    for word in words:
        found = _ASSIGN.match(word.text)
        names.append(found.group(1) if found else word.text if _NAME.match(word.text) else None)
    xla = [facts.XLA_VARIABLE_RE.match(n or "") is not None for n in names]
    if not any(xla):
        return
    removable = whole and all(xla)
    # one edit removes the line: as safe as its least safe variable
    weakest = Safety.UNSAFE if any(n in facts.BF16_VARIABLES for n in names) else Safety.SAFE
    for word, name, is_xla in zip(words, names, xla):
        if not is_xla:
            continue
        message, safety = _variable_message(name)
        if removable:
            safety = weakest
        edit = _whole_lines(ctx.lines, logical) if removable else None
        _hit(ctx, logical, word, message, safety, edit, "")


def _pip(ctx: _Ctx, logical: Logical, args: list[Word], found: list) -> None:
    skip_next = False
    for word in args:
        if skip_next:
            skip_next = False
            continue
        if word.text.startswith("-"):
            skip_next = word.text in _PIP_VALUE_OPTIONS
            continue
        requirement = deps.parse(word.value)
        if requirement is None or requirement.url:
            continue
        line, col = logical.pos(word.start)
        quoted = word.text != word.value
        dep = deps.Dep(word.value, line, col + (1 if quoted else 0), requirement, quoted)
        found.append(dep)


def _command(ctx: _Ctx, logical: Logical, words: list[Word], whole: bool, pins: list) -> None:
    i = 0
    while i < len(words) and _ASSIGN.match(words[i].text):
        i += 1
    prefix, rest = words[:i], words[i:]
    if not rest:
        _assignments(ctx, logical, prefix, whole)
        return
    for word in prefix:
        name = _ASSIGN.match(word.text).group(1)
        if facts.XLA_VARIABLE_RE.match(name):
            message, safety = _variable_message(name)
            edit = TextEdit(*_span(ctx, logical, word, trailing=True), "")
            _hit(ctx, logical, word, message, safety, edit, "")
    while rest and rest[0].value in _WRAPPERS:
        rest = rest[1:]
    if not rest:
        return
    head = rest[0].value
    if head == "export":
        _assignments(ctx, logical, rest[1:], whole and not prefix)
        return
    if head == "env":
        _command(ctx, logical, rest[1:], False, pins)
        return
    if head == facts.PRECOMPILE_COMMAND:
        _hit(
            ctx,
            logical,
            rest[0],
            "`neuron_parallel_compile` pre-compiles PyTorch/XLA graphs; TorchNeuron compiles "
            "on first use: delete this pre-compilation run and keep the training run",
        )
        _command(ctx, logical, rest[1:], False, pins)
        return
    values = [w.value for w in rest]
    if head == "optimum-cli" and values[1:3] == ["export", "neuron"]:
        _hit(
            ctx,
            logical,
            rest[0],
            "`optimum-cli export neuron` builds a precompiled model for the legacy stack; load "
            'the model with `transformers` and move it to "neuron" instead',
        )
        return
    pip_at = None
    if head in ("pip", "pip3") and values[1:2] == ["install"]:
        pip_at = 2
    elif _PYTHON.search(head) and values[1:4] == ["-m", "pip", "install"]:
        pip_at = 4
    elif head == "uv" and values[1:3] == ["pip", "install"]:
        pip_at = 3
    if pip_at is not None:
        _pip(ctx, logical, rest[pip_at:], pins)
        return
    if _PYTHON.search(head):
        _python(ctx, logical, rest)


def _python(ctx: _Ctx, logical: Logical, words: list[Word]) -> None:
    args = [w.value for w in words[1:]]
    j = 0
    while j < len(args) and args[j].startswith("-") and args[j] != "-m":
        j += 2 if args[j] in ("-X", "-W") else 1
    if j >= len(args):
        return
    if args[j] == "-m":
        module = args[j + 1] if j + 1 < len(args) else ""
        if module.startswith("torch_xla.distributed"):
            _hit(
                ctx,
                logical,
                words[0],
                f"`python -m {module}` is the PyTorch/XLA launcher; start one process per "
                "NeuronCore with `torchrun --nproc_per_node=N` instead",
            )
        return
    script = args[j]
    command = logical.text[words[0].start : words[-1].end]
    if (
        script.endswith(".py")
        and ctx.xla_file
        and (ctx.multiprocess_file or facts.MULTIPROCESS_SIGNS_RE.search(command))
    ):
        _hit(
            ctx,
            logical,
            words[0],
            f"`{script}` starts its own XLA worker processes (xmp.spawn); on TorchNeuron start it "
            f"with `torchrun --nproc_per_node=N {script}` (one process per NeuronCore)",
        )


def _span(ctx: _Ctx, logical: Logical, word: Word, trailing: bool) -> tuple[int, int]:
    line, col = logical.pos(word.start)
    start = ctx.lines.offset(line, col)
    end = start + len(word.text)
    if trailing:
        text = ctx.lines.text
        while end < len(text) and text[end] in " \t":
            end += 1
    return start, end


def _analyze(text: str, dockerfile: bool) -> list[Hit]:
    lines = Lines(text)
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    ctx = _Ctx(
        lines,
        [],
        xla_file=_XLA_SIGNS.search(code) is not None,
        multiprocess_file=facts.MULTIPROCESS_SIGNS_RE.search(code) is not None,
    )
    pins: list[deps.Dep] = []
    for kind, logical in _logicals(lines, dockerfile):
        if kind == "other":
            continue
        commands = _words(logical.text)
        if kind == "env":
            for words in commands:
                _assignments(ctx, logical, words, whole=len(commands) == 1)
            continue
        for words in commands:
            _command(ctx, logical, words, whole=len(commands) == 1, pins=pins)
    for hit in deps.check(pins):
        if hit.edit is not None:
            dep = hit.edit
            start = lines.offset(dep.line, dep.col)
            end = start + len(dep.text)
            if hit.replacement == "":
                while end < len(text) and text[end] in " \t":
                    end += 1
            new = hit.replacement
            if new and not dep.where and "*" in new:
                new = f'"{new}"'  # an unquoted `*` would be a glob
            hit.edit = TextEdit(start, end, new)
        ctx.hits.append(hit)
    return ctx.hits + configs.instance_hits(lines)


def analyze(text: str) -> list[Hit]:
    return _analyze(text, dockerfile=False)


def apply(text: str, hits: list[Hit]) -> str:
    return apply_edits(text, [h.edit for h in hits if isinstance(h.edit, TextEdit)])


class _Dockerfile:
    TRIGGER = TRIGGER
    apply = staticmethod(apply)

    @staticmethod
    def analyze(text: str) -> list[Hit]:
        return _analyze(text, dockerfile=True)


DOCKERFILE = _Dockerfile()
