"""Dependency pins (NM901 legacy-dependency, NM902 torch-family-mismatch, NM903 python-version,
NM906 end-of-support-dependency),
shared by every format that lists requirements. Requirement strings are read with `packaging`.

A format module hands over `Dep`s (a parsed requirement and where it is written) and gets back
`Hit`s whose `change` says what becomes of the requirement: a new requirement text, or "" for
removal. The format module turns that into an edit of its own syntax.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from neuron_migrate.checkers.project import facts
from neuron_migrate.checkers.project.core import Hit
from neuron_migrate.model import Safety


@dataclass
class Dep:
    text: str  # the requirement as written, without comment
    line: int
    col: int  # 1-based column of the first character of `text`
    requirement: Requirement
    # format data the format module needs for its edit (an index, a node, ...)
    where: object = None

    @property
    def name(self) -> str:
        return canonicalize_name(self.requirement.name)


def parse(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


# versions to try a specifier against: enough to tell which family it admits
def _family_probes(family: str, neuronx: bool) -> list[str]:
    if neuronx:
        return [f"{family}.3.0", f"{family}.3.0.1", f"{family}.3.1", f"{family}.4.0"]
    return [f"{family}.0", f"{family}.1", f"{family}.2", f"{family}.0.post1"]


def admits(spec: SpecifierSet, version: str) -> bool:
    return spec.contains(version, prereleases=True)


def families_of(spec: SpecifierSet, neuronx: bool) -> set[str]:
    """The native families a specifier admits (all of them when it is empty)."""
    return {
        fam for fam in facts.FAMILIES if any(admits(spec, v) for v in _family_probes(fam, neuronx))
    }


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


def is_legacy_neuronx(spec: SpecifierSet) -> bool:
    """Every version the pin admits is below the first native release (2.13.3)."""
    if not str(spec):
        return False  # unpinned: pip takes the newest, which is native
    start = Version(facts.NATIVE_NEURONX_START)
    probes = _own_versions(spec) + [v for fam in facts.FAMILIES for v in _family_probes(fam, True)]
    probes += [facts.NATIVE_NEURONX_START, "2.15.0", "3.0.0"]
    admitted = [Version(v) for v in probes if admits(spec, v)]
    return all(v < start for v in admitted)


def split_marker(text: str) -> tuple[str, str]:
    """`torch==2.1 ; python_version > "3.8"` -> ('torch==2.1', ' ; python_version > "3.8"')."""
    if ";" not in text:
        return text.rstrip(), text[len(text.rstrip()) :]
    head = text[: text.index(";")].rstrip()
    return head, text[len(head) :]


def _name_and_extras(head: str) -> str:
    """The name and extras as written: `torch_neuronx[foo]` of `torch_neuronx[foo] == 2.1`."""
    end = 0
    while end < len(head) and (head[end].isalnum() or head[end] in "._-"):
        end += 1
    rest = head[end:].lstrip()
    if rest.startswith("["):
        close = rest.find("]")
        if close != -1:
            return head[:end] + rest[: close + 1]
    return head[:end]


def repin(dep: Dep, specifier: str, name: str | None = None) -> str:
    """The requirement with a new specifier (and optionally a new name: then extras go),
    keeping the spelling of the name, the extras and the marker as written."""
    head, marker = split_marker(dep.text)
    kept = _name_and_extras(head) if name is None else name
    return f"{kept}{specifier}{marker}"


def neuron_project(deps: list[Dep]) -> bool:
    return any(d.name in facts.NEURON_PACKAGES for d in deps)


def target_family(deps: list[Dep]) -> str:
    """Torch pinned to one native family decides; else a native torch-neuronx pin; else 2.14."""
    for want_neuronx in (False, True):
        for dep in deps:
            if dep.name != (facts.NEURONX if want_neuronx else facts.TORCH):
                continue
            if want_neuronx and is_legacy_neuronx(dep.requirement.specifier):
                continue
            fams = families_of(dep.requirement.specifier, want_neuronx)
            if len(fams) == 1:
                return fams.pop()
    return facts.DEFAULT_FAMILY


def _hit(code: str, dep: Dep, message: str, change: str | None, safety=None) -> Hit:
    return Hit(
        code=code,
        line=dep.line,
        col=dep.col,
        end_col=dep.col + len(dep.text),
        message=message,
        safety=safety if change is not None else None,
        replacement=change,
        edit=dep if change is not None else None,
    )


def check(deps: list[Dep]) -> list[Hit]:
    """NM901 and NM902 for the requirements of one file."""
    if not neuron_project(deps):
        return []
    family = target_family(deps)
    pin = f"=={family}.*"
    neuronx_pin = f"{facts.NEURONX}{pin}"
    torch_pin = f"{facts.TORCH}{pin}"
    has_neuronx = any(d.name == facts.NEURONX for d in deps)
    replaced_backend = False
    hits: list[Hit] = []
    for dep in deps:
        spec = dep.requirement.specifier
        shown = dep.text.strip()
        if dep.name in facts.XLA_BACKEND:
            if has_neuronx or replaced_backend:
                change, what = "", "remove it"
            else:
                change = repin(dep, pin, name=facts.NEURONX)
                what = f"use `{neuronx_pin}` (TorchNeuron) with `{torch_pin}`"
                replaced_backend = True
            hits.append(
                _hit(
                    "NM901",
                    dep,
                    f"`{shown}` is PyTorch/XLA, unsupported for training on Trainium from "
                    f"Neuron 2.30; {what}",
                    change,
                    Safety.SAFE,
                )
            )
        elif dep.name == facts.NEURONX and is_legacy_neuronx(spec):
            hits.append(
                _hit(
                    "NM901",
                    dep,
                    f"`{shown}` is the legacy XLA-based torch-neuronx; pin the native family "
                    f"`{neuronx_pin}` with `{torch_pin}`",
                    repin(dep, pin),
                    Safety.SAFE,
                )
            )
        elif dep.name in facts.LEGACY_LIBRARIES:
            hits.append(
                _hit(
                    "NM901",
                    dep,
                    f"`{shown}` needs PyTorch/XLA; port its uses to "
                    f"{facts.LEGACY_LIBRARIES[dep.name]}, then drop the dependency",
                    None,
                )
            )
        elif dep.name in facts.END_OF_SUPPORT:
            hits.append(
                _hit(
                    "NM906",
                    dep,
                    f"`{shown}`: {facts.END_OF_SUPPORT[dep.name]}; move to TorchNeuron, "
                    f"`{neuronx_pin}` with `{torch_pin}`",
                    None,
                )
            )
        elif dep.name == facts.TORCH and str(spec) and family not in families_of(spec, False):
            hits.append(
                _hit(
                    "NM902",
                    dep,
                    f"`{shown}` is not the PyTorch of the torch-neuronx family: pin "
                    f"`{torch_pin}` with `{neuronx_pin}`",
                    repin(dep, pin),
                    Safety.SAFE,
                )
            )
        elif dep.name == facts.NEURONX and str(spec) and family not in families_of(spec, True):
            hits.append(
                _hit(
                    "NM902",
                    dep,
                    f"`{shown}` does not match the pinned PyTorch {family}: pin `{neuronx_pin}`",
                    repin(dep, pin),
                    Safety.SAFE,
                )
            )
    return hits


def old_python(spec_text: str) -> bool:
    """Does a requires-python admit a Python below 3.12, or none of 3.12-3.14?"""
    try:
        spec = SpecifierSet(spec_text)
    except InvalidSpecifier:
        return False
    low = facts.PYTHON_MIN[1]
    older = [f"3.{m}.0" for m in range(6, low)] + [f"3.{m}" for m in range(6, low)]
    supported = [f"3.{m}.0" for m in range(low, facts.PYTHON_MAX[1] + 1)]
    return any(admits(spec, v) for v in older) or not any(admits(spec, v) for v in supported)


PYTHON_FIX = f">={facts.PYTHON_MIN[0]}.{facts.PYTHON_MIN[1]}"


def python_hit(spec_text: str, line: int, col: int, end_col: int, edit) -> Hit:
    return Hit(
        code="NM903",
        line=line,
        col=col,
        end_col=end_col,
        message=f"requires Python `{spec_text}`; TorchNeuron runs on Python 3.12-3.14: "
        f"require `{PYTHON_FIX}`",
        safety=Safety.UNSAFE,
        replacement=PYTHON_FIX,
        edit=edit,
    )
