"""NM902 torch-family-mismatch: torch and torch-neuronx pinned to different families."""

from __future__ import annotations

from neuron_migrate.checkers.project.api import Context, Pin, Report, checks

from . import pack


@checks("pin")
def check(pin: Pin, ctx: Context) -> list[Report]:
    if not str(pin.specifier) or not pack.neuron_project(ctx):
        return []
    torch, neuronx = pack.pair(ctx)
    is_neuronx = pin.named(neuronx)
    if not (is_neuronx or pin.named(torch)) or pack.is_legacy_neuronx(ctx, pin):
        return []  # a legacy torch-neuronx is NM901's
    family = pack.target_family(ctx)
    if family in pack.families_of(ctx, pin.specifier, is_neuronx):
        return []
    specifier = f"=={family}.*"
    return [
        ctx.report(
            pin,
            "neuronx" if is_neuronx else "torch",
            replacement=pin.repinned(specifier),
            pin=pin.shown,
            family=family,
            torch_pin=f"{torch}{specifier}",
            neuronx_pin=f"{neuronx}{specifier}",
        )
    ]
