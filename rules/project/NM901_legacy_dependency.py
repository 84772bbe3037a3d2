"""NM901 legacy-dependency: the XLA backend becomes one torch-neuronx pin (or goes), a legacy
torch-neuronx is repinned to the native family, libraries built on PyTorch/XLA are reported."""

from __future__ import annotations

from neuron_migrate.checkers.project.api import Context, Pin, Report, checks, report_by_names

from . import pack


@checks("pin")
def check(pin: Pin, ctx: Context) -> list[Report]:
    if not pack.neuron_project(ctx):
        return []
    torch, neuronx = pack.pair(ctx)
    specifier = f"=={pack.target_family(ctx)}.*"
    values = {
        "pin": pin.shown,
        "neuronx_pin": f"{neuronx}{specifier}",
        "torch_pin": f"{torch}{specifier}",
    }
    backend = ctx.case("xla-backend").names
    if any(pin.named(n) for n in backend):
        # one torch-neuronx pin replaces the backend: the first backend pin becomes it, unless
        # the file has one already; the other backend pins go
        before = ctx.pins[: next(i for i, p in enumerate(ctx.pins) if p is pin)]
        if any(p.named(neuronx) for p in ctx.pins) or any(
            p.named(n) for p in before for n in backend
        ):
            return [ctx.report(pin, "extra-xla-backend", replacement="", **values)]
        new = pin.repinned(specifier, name=neuronx)
        return [ctx.report(pin, "xla-backend", replacement=new, **values)]
    if pack.is_legacy_neuronx(ctx, pin):
        return [ctx.report(pin, "legacy-neuronx", replacement=pin.repinned(specifier), **values)]
    # the libraries built on PyTorch/XLA: data, reported as they are
    return report_by_names(pin, ctx, [c for c in ctx.cases("pin") if c.safety is None])
