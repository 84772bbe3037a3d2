"""What the pin rules of pack `project` share (NM901-NM903): is a file a Neuron project, which
torch family does it target, is a torch-neuronx pin the legacy XLA-based package. The facts are
the pack's `[lists]` (pack.toml) and the rules' `names`; this module holds only the reasoning.

Each torch-neuronx family F (2.13, 2.14) is released as F.3.x and goes with torch F.x; a
torch-neuronx pin that admits only versions below the first native release is the legacy one."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_migrate.checkers.project.api import Context, Pin


def admits(spec: SpecifierSet, version: str) -> bool:
    return spec.contains(version, prereleases=True)


def pair(ctx: Context) -> tuple[str, str]:
    """(torch, torch-neuronx) as the pack names them."""
    torch, neuronx = ctx.lists["native-pair"]
    return torch, neuronx


def families(ctx: Context) -> tuple[str, ...]:
    return ctx.lists["torch-families"]


def _probes(family: str, neuronx: bool) -> list[str]:
    """Versions to try a specifier against: enough to tell which family it admits."""
    if neuronx:
        return [f"{family}.3.0", f"{family}.3.0.1", f"{family}.3.1", f"{family}.4.0"]
    return [f"{family}.0", f"{family}.1", f"{family}.2", f"{family}.0.post1"]


def families_of(ctx: Context, spec: SpecifierSet, neuronx: bool) -> set[str]:
    """The native families a specifier admits (all of them when it is empty)."""
    return {f for f in families(ctx) if any(admits(spec, v) for v in _probes(f, neuronx))}


def _own_versions(spec: SpecifierSet) -> list[str]:
    out = []
    for item in spec:
        text = item.version.removesuffix(".*")
        try:
            Version(text)
        except InvalidVersion:
            continue
        out.append(text)
    return out


def native_start(ctx: Context) -> str:
    """The first native release: the bound of the pack's `legacy-neuronx` (`<2.13.3`)."""
    (legacy,) = ctx.lists["legacy-neuronx"]
    (bound,) = SpecifierSet(legacy[len(pair(ctx)[1]) :].strip())
    return bound.version


def is_legacy_neuronx(ctx: Context, pin: Pin) -> bool:
    """A torch-neuronx pin whose every version is below the first native release."""
    if not pin.named(pair(ctx)[1]):
        return False
    spec, start = pin.specifier, native_start(ctx)
    if not str(spec):
        return False  # unpinned: pip takes the newest, which is native
    probes = _own_versions(spec) + [v for f in families(ctx) for v in _probes(f, True)]
    probes += [start, "2.15.0", "3.0.0"]
    admitted = [Version(v) for v in probes if admits(spec, v)]
    return all(v < Version(start) for v in admitted)


def neuron_project(ctx: Context) -> bool:
    """Does the file pin a package of the Neuron stack (pack list `neuron-packages`)?"""
    if "neuron-project" not in ctx.memo:
        names = ctx.lists["neuron-packages"]
        ctx.memo["neuron-project"] = any(p.named(n) for p in ctx.pins for n in names)
    return ctx.memo["neuron-project"]


def target_family(ctx: Context) -> str:
    """Torch pinned to one native family decides; else a native torch-neuronx pin; else the
    newest family."""
    if "target-family" not in ctx.memo:
        ctx.memo["target-family"] = _target_family(ctx)
    return ctx.memo["target-family"]


def _target_family(ctx: Context) -> str:
    torch, neuronx = pair(ctx)
    for want_neuronx in (False, True):
        for pin in ctx.pins:
            if not pin.named(neuronx if want_neuronx else torch):
                continue
            if want_neuronx and is_legacy_neuronx(ctx, pin):
                continue
            found = families_of(ctx, pin.specifier, want_neuronx)
            if len(found) == 1:
                return found.pop()
    return families(ctx)[0]
