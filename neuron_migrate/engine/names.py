"""Qualified-name patterns of rule files: exact names, `pkg.*` (anything below), `*` (part of
one segment) and `**.` (any number of modules)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_pattern", "matches_name", "name_match"]


@lru_cache(maxsize=1024)
def glob_pattern(name: str) -> re.Pattern[str]:
    """`*` matches within one segment (and is captured: {glob1}, ...); a `**.` segment matches
    any number of segments (`optimum.neuron.**.NeuronTrainer` is the class wherever it lives)."""
    out = []
    for piece in re.split(r"(\*\*\.|\*)", name):
        if piece == "**.":
            out.append(r"(?:\w+\.)*")
        elif piece == "*":
            out.append(r"(\w*)")
        else:
            out.append(re.escape(piece))
    return re.compile("".join(out) + "$")


def matches_name(qname: str, names: tuple[str, ...]) -> bool:
    return any(name_match(qname, name) is not None for name in names)


def name_match(qname: str, name: str) -> tuple[str, ...] | None:
    """None when `qname` is not `name`; else what the wildcards of `name` matched."""
    if name.endswith(".*") and "*" not in name[:-2]:
        base = name[:-2]
        return () if qname == base or qname.startswith(base + ".") else None
    if "*" in name:
        found = glob_pattern(name).match(qname)
        return found.groups() if found else None
    return () if qname == name else None
