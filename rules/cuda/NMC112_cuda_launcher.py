"""NMC112 cuda-launcher: `CUDA_VISIBLE_DEVICES` in launchers becomes `NEURON_RT_VISIBLE_CORES`
(unsafe); CUDA base images and `torchrun --nproc_per_node=gpu` are reported."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import (
    Command,
    Context,
    Line,
    Report,
    checks,
)

_NEW = "NEURON_RT_VISIBLE_CORES"
_NPROC = re.compile(r"^--nproc[_-]per[_-]node(?:=(?P<value>.*))?$")


@checks("line")
def check_line(line: Line, ctx: Context) -> list[Report]:
    out = []
    for pattern in ctx.case("visible-devices").names:
        for found in re.finditer(pattern, line.text):
            part = line.part(found.start(), found.end())
            out.append(ctx.report(part, "visible-devices", replacement=_NEW, name=found.group()))
    return out


@checks("command")
def check_command(command: Command, ctx: Context) -> list[Report]:
    if not any(command.starts_with(n) for n in ctx.case("per-gpu").names):
        return []
    words = command.words
    for index, word in enumerate(words):
        found = _NPROC.match(word.value)
        if found is None:
            continue
        value = found["value"]
        if value is None and index + 1 < len(words):
            value = words[index + 1].value
        if value == "gpu":
            option = command.text[word.offset - words[0].offset :].split()[0]
            return [ctx.report(command, "per-gpu", at=word, option=option)]
    return []
