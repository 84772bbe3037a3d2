"""NMC111 cuda-dependency: CUDA builds of torch lose their `+cuNNN`, NVIDIA runtime wheels and
PyTorch's CUDA wheel indexes go, CUDA-only packages are reported."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project.api import (
    Context,
    Option,
    Pin,
    Report,
    checks,
    report_by_names,
)

_LOCAL = re.compile(r"(?<=[0-9*])\+cu[0-9]{2,3}\b")
_CUDA_INDEX = re.compile(r"/cu[0-9]{2,3}/?$")


@checks("pin")
def check_pin(pin: Pin, ctx: Context) -> list[Report]:
    local = _LOCAL.search(pin.text)
    if local is not None:
        new = _LOCAL.sub("", pin.text)
        return [ctx.report(pin, "cuda-build", replacement=new, pin=pin.shown, local=local.group())]
    if any(pin.named(n) for n in ctx.case("nvidia-wheel").names):
        return [ctx.report(pin, "nvidia-wheel", replacement="", pin=pin.shown)]
    return report_by_names(pin, ctx, [ctx.case("cuda-only")])


@checks("option")
def check_option(option: Option, ctx: Context) -> list[Report]:
    if option.name in ctx.case("cuda-index").names and _CUDA_INDEX.search(option.value):
        return [ctx.report(option, "cuda-index", replacement="", value=option.value)]
    return []
