"""Instance types in configs (NM905): YAML, JSON and TOML files, and the other formats' lines.

Lines are scanned for instance-type strings only (`trn1.32xlarge`, `inf2.xlarge`,
`ml.trn1.2xlarge`): no YAML or JSON parser is needed to find them, and nothing else in these
files is reported."""

from __future__ import annotations

import re

from neuron_migrate.checkers.project import facts
from neuron_migrate.checkers.project.core import Hit, Lines

TRIGGER = re.compile(rb"trn1|inf1|inf2")
# a neuron-migrate rule file (one rule, or a pack of `[[rule]]`s) quotes legacy files in its
# examples
_RULE_FILE = re.compile(r"(?m)^(\[pack\]|\[\[match\]\]|\[\[rule\]\])\s*$")


def instance_hits(lines: Lines) -> list[Hit]:
    hits = []
    for number in range(1, len(lines) + 1):
        text = lines.content(number)
        if text.lstrip().startswith("#"):
            continue  # a comment that mentions an instance is not a config
        for found in facts.INSTANCE_RE.finditer(text):
            hits.append(
                Hit(
                    code="NM905",
                    line=number,
                    col=found.start() + 1,
                    end_col=found.end() + 1,
                    message=f"`{found.group()}` is an instance type TorchNeuron does not run on "
                    f"(Trn2 and Trn3 only): use {facts.SUPPORTED_INSTANCES}",
                )
            )
    return hits


def analyze(text: str) -> list[Hit]:
    if _RULE_FILE.search(text) and ("[[rule]]" in text or "[[match]]" in text):
        return []
    return instance_hits(Lines(text))


def apply(text: str, hits: list[Hit]) -> str:
    return text  # NM905 has no fix
