"""The enabled rules, indexed once per run for the single-pass matcher."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from neuron_migrate.packs.loader import Pattern, Rule

# the kinds of match this engine reads in Python code; packs may hold others (project files)
PYTHON_KINDS = frozenset(
    {
        "call",
        "reference",
        "import",
        "device-string",
        "module-placement",
        "unused-import",
        "method",
        "keyword",
        "env-write",
        "device-loader",
    }
)

# the engine's own kind: a file the checkers cannot read or parse
UNREADABLE_KIND = "unreadable"
# what each kind of match needs to see in the bytes before a parse is worth it
KIND_TRIGGERS = {
    # the string literal "xla" or "xla:N": a quote right before it
    "device-string": [rb"[\"']xla[\"':]"],
}
# packages imported by nearly every file of an ML repo: a poor trigger on their own
COMMON_ROOTS = {"torch", "os", "numpy", "transformers"}


@dataclass(frozen=True)
class Entry:
    rule: Rule
    pattern: Pattern
    # the name the pattern matched: longer is more specific
    name: str
    # for a name with `*` inside (`optimum.neuron.NeuronModelFor*`): its regex
    glob: re.Pattern[str] | None = None


def _literal(name: str) -> str:
    """The longest part of a name without wildcards: what the bytes must contain."""
    parts = re.split(r"\*+", name)
    return max(parts, key=len)


def _name_trigger(name: str, kind: str) -> tuple[bytes | None, bytes | None]:
    """(a literal trigger, or a word that must follow a `.` or stand in an import line).

    Any file that uses a qualified name imports its package, so the package name is in the
    bytes: that is the trigger. For a package that every file imports (torch), the name's last
    segment is used instead, and it can only be written after a dot (`torch.fft`, `x.double()`)
    or in the import that binds it (`from torch import fft`)."""
    if kind in ("keyword", "env-write"):
        return re.escape(_literal(name)).encode(), None
    if kind == "method":
        return None, re.escape(_literal(name)).encode()
    segments = [s for s in name.split(".") if s and s != "*"]
    if segments[0] in COMMON_ROOTS:
        return None, re.escape(_literal(segments[-1])).encode()
    return re.escape(_literal(segments[0])).encode(), None


def _word_triggers(words: set[bytes]) -> set[bytes]:
    group = b"(?:" + b"|".join(sorted(words)) + b")"
    return {
        rb"\." + group,
        rb"import[^\n]*\b" + group,
        rb"import\s*\([^)]*\b" + group,
    }


def _distinctive(names: tuple[str, ...]) -> bool:
    """Names whose package is rare enough to be the trigger (`optimum.neuron.*`), so that a
    keyword rule on them need not list every keyword."""
    return bool(names) and all(n.split(".")[0] not in COMMON_ROOTS for n in names)


_META = re.compile(rb"[\\.^$*+?()\[\]{}|]")


def _minimal(triggers: set[bytes]) -> set[bytes]:
    """Drop a literal trigger that contains another one (`torch_xla` when `xla` is there): the
    regex does the same work with fewer alternatives."""
    literals = {t for t in triggers if not _META.search(t)}
    return {
        t for t in triggers if t not in literals or not any(o != t and o in t for o in literals)
    }


def _glob(name: str) -> re.Pattern[str]:
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


@dataclass
class RuleSet:
    rules: tuple[Rule, ...]
    calls: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    call_patterns: list[Entry] = field(default_factory=list)
    references: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    reference_patterns: list[Entry] = field(default_factory=list)
    imports: list[Entry] = field(default_factory=list)
    device_strings: list[Entry] = field(default_factory=list)
    placements: list[Entry] = field(default_factory=list)
    unused_imports: list[Entry] = field(default_factory=list)
    methods: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    keywords: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    env_writes: list[Entry] = field(default_factory=list)
    loaders: list[Entry] = field(default_factory=list)
    prefilter: re.Pattern[bytes] | None = None
    # the calls and references of every loaded rule, enabled or not
    universe: RuleSet | None = None

    @classmethod
    def build(cls, rules: tuple[Rule, ...], universe: tuple[Rule, ...] | None = None) -> RuleSet:
        rs = cls(rules=rules)
        if universe is not None and universe != rules:
            rs.universe = cls.build(universe)
        triggers: set[bytes] = set()
        words: set[bytes] = set()
        for rule in rules:
            for pattern in rule.patterns:
                if pattern.kind not in PYTHON_KINDS:
                    continue  # read by another checker (project files)
                rs._add(rule, pattern)
                if pattern.triggers:
                    triggers.update(t.encode() for t in pattern.triggers)
                    continue
                if pattern.kind in KIND_TRIGGERS:
                    triggers.update(KIND_TRIGGERS[pattern.kind])
                    continue
                if pattern.kind == "keyword" and not _distinctive(pattern.names):
                    triggers.update(re.escape(k).encode() for k in pattern.keywords)
                    continue
                kind = "call" if pattern.kind == "keyword" else pattern.kind
                for name in pattern.names:
                    literal, word = _name_trigger(name, kind)
                    if literal is not None:
                        triggers.add(literal)
                    if word is not None:
                        words.add(word)
        # most specific first
        rs.call_patterns.sort(key=lambda e: -len(e.name))
        rs.reference_patterns.sort(key=lambda e: -len(e.name))
        if words:
            triggers |= _word_triggers(words)
        if triggers:
            rs.prefilter = re.compile(b"|".join(sorted(_minimal(triggers))))
        elif rs.universe is not None and any(
            p.kind == UNREADABLE_KIND for r in rules for p in r.patterns
        ):
            # only the "file not checked" rule is on (`--select NM000`): the files worth
            # parsing are those any loaded rule would read
            rs.prefilter = rs.universe.prefilter
        return rs

    def _add(self, rule: Rule, pattern: Pattern) -> None:
        kind = pattern.kind
        if kind in ("device-string", "module-placement"):
            bucket = self.device_strings if kind == "device-string" else self.placements
            bucket.append(Entry(rule, pattern, ""))
            return
        if kind == "keyword":
            for keyword in pattern.keywords:
                self.keywords[keyword].append(Entry(rule, pattern, keyword))
            return
        for name in pattern.names:
            if kind == "method":
                self.methods[name].append(Entry(rule, pattern, name))
            elif kind in ("import", "unused-import", "env-write", "device-loader"):
                bucket = {
                    "import": self.imports,
                    "unused-import": self.unused_imports,
                    "env-write": self.env_writes,
                    "device-loader": self.loaders,
                }[kind]
                bucket.append(Entry(rule, pattern, name))
            else:
                exact, patterned = (
                    (self.calls, self.call_patterns)
                    if kind == "call"
                    else (self.references, self.reference_patterns)
                )
                if name.endswith(".*") and "*" not in name[:-2]:
                    patterned.append(Entry(rule, pattern, name[:-2]))
                elif "*" in name:
                    bare = name.replace("**.", "").replace("*", "")
                    patterned.append(Entry(rule, pattern, bare, _glob(name)))
                else:
                    exact[name].append(Entry(rule, pattern, name))

    def wants(self, data: bytes) -> bool:
        """The byte-level prefilter: could any enabled rule match in this file?"""
        return self.prefilter is not None and self.prefilter.search(data) is not None

    @staticmethod
    def _lookup(qname: str, exact: dict[str, list[Entry]], patterned: list[Entry]) -> list[Entry]:
        found = list(exact.get(qname, ()))
        for entry in patterned:
            if entry.glob is not None:
                if entry.glob.match(qname):
                    found.append(entry)
            elif qname == entry.name or qname.startswith(entry.name + "."):
                found.append(entry)
        return found

    def call_entries(self, qname: str) -> list[Entry]:
        return self._lookup(qname, self.calls, self.call_patterns)

    def reference_entries(self, qname: str) -> list[Entry]:
        return self._lookup(qname, self.references, self.reference_patterns)

    def owned_elsewhere(self, qname: str, longest: int, call: bool) -> bool:
        """Does a rule that is not enabled name `qname` more specifically than `longest`?"""
        if self.universe is None:
            return False
        entries = self.universe.reference_entries(qname)
        if call:
            entries += self.universe.call_entries(qname)
        return any(len(e.name) > longest for e in entries)


def matches_name(qname: str, names: tuple[str, ...]) -> bool:
    return any(name_match(qname, name) is not None for name in names)


def name_match(qname: str, name: str) -> tuple[str, ...] | None:
    """None when `qname` is not `name`; else what the wildcards of `name` matched."""
    if name.endswith(".*") and "*" not in name[:-2]:
        base = name[:-2]
        return () if qname == base or qname.startswith(base + ".") else None
    if "*" in name:
        found = _glob(name).match(qname)
        return found.groups() if found else None
    return () if qname == name else None
