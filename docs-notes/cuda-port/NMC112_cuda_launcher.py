"""NMC112 cuda-launcher: `CUDA_VISIBLE_DEVICES` in launcher lines becomes
`NEURON_RT_VISIBLE_CORES` (unsafe); CUDA base images and `--nproc_per_node=gpu` are data."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import Context, Line, Report, checks, report_by_names


@checks("line")
def check_line(line: Line, ctx: Context) -> list[Report]:
    old, new = ctx.case("visible-devices").names
    out = [
        ctx.report(line.part(*found.span()), "visible-devices", replacement=new, name=old, new=new)
        for found in re.finditer(rf"\b{re.escape(old)}\b", line.text)
    ]
    return out + report_by_names(line, ctx, [ctx.case("per-gpu")])
