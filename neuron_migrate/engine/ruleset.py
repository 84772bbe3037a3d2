"""The enabled rules, indexed once per run for the single-pass matcher."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from neuron_migrate.packs import Pattern, Rule

# the kinds of match this engine reads in Python code; packs may hold others (project files)
PYTHON_KINDS = frozenset(
    {"call", "reference", "import", "device-string", "module-placement", "unused-import"}
)

# what each kind of match needs to see in the bytes before a parse is worth it
KIND_TRIGGERS = {
    "device-string": [rb"xla"],
}


@dataclass(frozen=True)
class Entry:
    rule: Rule
    pattern: Pattern
    # the name the pattern matched: longer is more specific
    name: str


# packages imported by nearly every file of an ML repo: a poor trigger on their own
COMMON_ROOTS = {"torch", "os", "numpy", "transformers"}


def _name_trigger(name: str) -> bytes:
    """Any file that uses a qualified name imports its package, so the package name appears in
    the bytes; so does the last segment (`from torch import compile`). Take the rarer one."""
    segments = [s for s in name.split(".") if s != "*"]
    word = segments[-1] if segments[0] in COMMON_ROOTS else segments[0]
    return re.escape(word).encode()


@dataclass
class RuleSet:
    rules: tuple[Rule, ...]
    calls: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    call_prefixes: list[Entry] = field(default_factory=list)
    references: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    reference_prefixes: list[Entry] = field(default_factory=list)
    imports: list[Entry] = field(default_factory=list)
    device_strings: list[Entry] = field(default_factory=list)
    placements: list[Entry] = field(default_factory=list)
    unused_imports: list[Entry] = field(default_factory=list)
    prefilter: re.Pattern[bytes] | None = None

    @classmethod
    def build(cls, rules: tuple[Rule, ...]) -> RuleSet:
        rs = cls(rules=rules)
        triggers: set[bytes] = set()
        for rule in rules:
            for pattern in rule.patterns:
                if pattern.kind not in PYTHON_KINDS:
                    continue  # read by another checker (project files)
                triggers.update(t.encode() for t in pattern.triggers)
                if not pattern.triggers:
                    triggers.update(KIND_TRIGGERS.get(pattern.kind, []))
                    triggers.update(_name_trigger(n) for n in pattern.names)
                for name in pattern.names or ("",):
                    entry = Entry(rule, pattern, name.removesuffix(".*"))
                    if pattern.kind in ("call", "reference"):
                        exact, prefixes = (
                            (rs.calls, rs.call_prefixes)
                            if pattern.kind == "call"
                            else (rs.references, rs.reference_prefixes)
                        )
                        if name.endswith(".*"):
                            prefixes.append(entry)
                        else:
                            exact[name].append(entry)
                    elif pattern.kind == "import":
                        rs.imports.append(entry)
                    elif pattern.kind == "unused-import":
                        rs.unused_imports.append(entry)
                for kind, bucket in (
                    ("device-string", rs.device_strings),
                    ("module-placement", rs.placements),
                ):
                    if pattern.kind == kind:
                        bucket.append(Entry(rule, pattern, ""))
        # most specific prefix first
        rs.call_prefixes.sort(key=lambda e: -len(e.name))
        rs.reference_prefixes.sort(key=lambda e: -len(e.name))
        if triggers:
            rs.prefilter = re.compile(b"|".join(sorted(triggers)))
        return rs

    def wants(self, data: bytes) -> bool:
        """The byte-level prefilter: could any enabled rule match in this file?"""
        return self.prefilter is not None and self.prefilter.search(data) is not None

    @staticmethod
    def _lookup(qname: str, exact: dict[str, list[Entry]], prefixes: list[Entry]) -> list[Entry]:
        found = list(exact.get(qname, ()))
        for entry in prefixes:
            if qname == entry.name or qname.startswith(entry.name + "."):
                found.append(entry)
        return found

    def call_entries(self, qname: str) -> list[Entry]:
        return self._lookup(qname, self.calls, self.call_prefixes)

    def reference_entries(self, qname: str) -> list[Entry]:
        return self._lookup(qname, self.references, self.reference_prefixes)


def matches_name(qname: str, names: tuple[str, ...]) -> bool:
    for name in names:
        if name.endswith(".*"):
            base = name[:-2]
            if qname == base or qname.startswith(base + "."):
                return True
        elif qname == name:
            return True
    return False
