"""NM903 python-version: a Neuron project that still admits a Python TorchNeuron does not run."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from neuron_migrate.checkers.project.api import Context, PythonRequires, Report, checks

from . import pack

_OLDEST_CHECKED = 6  # Python 3.6: older specifiers are not worth probing


def _too_old(spec_text: str, versions: tuple[str, ...]) -> bool:
    """Does the specifier admit a Python older than `versions`, or none of them?"""
    try:
        spec = SpecifierSet(spec_text)
    except InvalidSpecifier:
        return False
    major, low = (int(n) for n in versions[0].split("."))
    older = [f"{major}.{m}.0" for m in range(_OLDEST_CHECKED, low)]
    older += [f"{major}.{m}" for m in range(_OLDEST_CHECKED, low)]
    supported = [f"{v}.0" for v in versions]
    return any(pack.admits(spec, v) for v in older) or not any(
        pack.admits(spec, v) for v in supported
    )


@checks("python-requires")
def check(item: PythonRequires, ctx: Context) -> list[Report]:
    versions = ctx.lists["python-versions"]
    if not pack.neuron_project(ctx) or not _too_old(item.spec, versions):
        return []
    fix = f">={versions[0]}"
    return [
        ctx.report(
            item,
            "old-python",
            replacement=fix,
            spec=item.shown,
            low=versions[0],
            high=versions[-1],
            fix=fix,
        )
    ]
