"""NMC111 cuda-dependency: CUDA builds of torch (`+cu121`), PyTorch's CUDA wheel indexes and
NVIDIA runtime wheels (fixed), packages with CUDA kernels only (reported, data cases)."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import (
    Context,
    Item,
    Option,
    Pin,
    Report,
    checks,
    report_by_names,
)

_LOCAL_BUILD = re.compile(r"(?<=[0-9*])\+cu[0-9]{2,3}\b")
_CUDA_INDEX = re.compile(r"/(?:whl/)?cu[0-9]{2,3}/?$")
_OWN = ("cuda-build", "nvidia-wheel")


@checks("pin")
def check_pin(pin: Pin, ctx: Context) -> list[Report]:
    builds = list(_LOCAL_BUILD.finditer(pin.text))
    if builds:
        first = builds[0]
        at = Item(pin.line, pin.col + first.start(), pin.col + first.end())
        new = _LOCAL_BUILD.sub("", pin.text)
        return [ctx.report(pin, "cuda-build", at=at, replacement=new, build=first.group())]
    name = pin.requirement.name
    if any(pin.named(n) for n in ctx.case("nvidia-wheel").names):
        return [ctx.report(pin, "nvidia-wheel", replacement="", name=name)]
    data = [c for c in ctx.cases("pin") if c.case not in _OWN]
    return report_by_names(pin, ctx, data)


@checks("option")
def check_option(option: Option, ctx: Context) -> list[Report]:
    if option.name not in ctx.case("cuda-index").names or not _CUDA_INDEX.search(option.value):
        return []
    return [ctx.report(option, "cuda-index", replacement="", url=option.value)]
