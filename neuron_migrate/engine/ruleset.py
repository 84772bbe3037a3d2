"""The enabled rules, indexed once per run for the single-pass matcher."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from neuron_migrate.engine.names import glob_pattern
from neuron_migrate.packs.loader import Pattern, Rule
from neuron_migrate.packs.vocabulary import MATCH_KINDS, UNREADABLE_KIND

if TYPE_CHECKING:
    # coderule imports LibCST: only a rule set with code rules loads it, so a start-up that
    # checks nothing (--version, a run served from the cache) does not pay for it
    from neuron_migrate.engine.coderule import CodeRule

# the kinds of match this engine reads in Python code; packs may hold others (project files)
PYTHON_KINDS = frozenset(MATCH_KINDS)


def _device_string_trigger(device: str) -> bytes:
    """A string literal naming the device ("xla" or "xla:N"): a quote right before it."""
    return b"[\"']" + re.escape(device).encode() + b"[\"':]"


# packages imported by nearly every file of an ML repo: a poor trigger on their own
COMMON_ROOTS = {"torch", "os", "numpy", "transformers"}


@dataclass(frozen=True)
class Entry:
    rule: Rule
    pattern: Pattern
    # the name the pattern matched: longer is more specific
    name: str
    # for a name with `*` inside (`optimum.neuron.NeuronModelFor*`): the name as written, and
    # what every name it matches starts with (its regex is compiled at the first name that
    # does: a rule set holds a hundred globs and a file uses few of their packages)
    glob_name: str | None = None
    prefix: str = ""

    @property
    def glob(self) -> re.Pattern[str] | None:
        return None if self.glob_name is None else glob_pattern(self.glob_name)


def _literal(name: str) -> str:
    """The longest part of a name without wildcards: what the bytes must contain."""
    parts = re.split(r"\*+", name)
    return max(parts, key=len)


def _word(segment: str) -> bytes:
    """A name's segment as a word trigger: the whole word (`double` is not `double_quant`),
    or for a segment with a wildcard its longest literal part, as a prefix."""
    if "*" in segment:
        return re.escape(_literal(segment)).encode()
    return re.escape(segment).encode() + rb"\b"


# kinds whose names are matched only through the file's own imports (scopes.py)
_RESOLVED_KINDS = ("call", "reference", "import", "unused-import")


def _name_trigger(
    name: str, kind: str
) -> tuple[bytes | None, bytes | None, tuple[str, str] | None]:
    """(a literal trigger, a word that must follow a `.` or stand in an import line, or the
    (package, first module) of a name such as `optimum.neuron.**.NeuronTrainer`).

    Any file that uses a qualified name imports its package, so the package name is in the
    bytes: that is the trigger. For a package that every file imports (torch), the name's last
    segment is used instead, and it can only be written after a dot (`torch.fft`, `x.double()`)
    or in the import that binds it (`from torch import fft`). A name resolved through the
    imports whose first module is named (`optimum.neuron`) gives its package and that module,
    so that the package's name in prose ("optimum performance") is no trigger
    (`_package_triggers`)."""
    if kind in ("keyword", "env-write"):
        return re.escape(_literal(name)).encode(), None, None
    if kind == "method":
        return None, _word(name), None
    segments = [s for s in name.split(".") if s and s != "*"]
    if segments[0] in COMMON_ROOTS:
        return None, _word(segments[-1]), None
    if (
        kind in _RESOLVED_KINDS
        and len(segments) > 1
        and "*" not in segments[0]
        and "*" not in segments[1]
    ):
        return None, None, (segments[0], segments[1])
    return re.escape(_literal(segments[0])).encode(), None, None


def _package_triggers(package: str, modules: set[str]) -> set[bytes]:
    """What a file that binds a name under `package.module` must contain: the dotted name
    (`optimum.neuron`, `import optimum.neuron as on`, spaces around the dot allowed), a
    from-import of the package (`from optimum import neuron`), or an import line naming the
    package (`import optimum as o`, then `o.neuron.NeuronTrainer`; continuation lines too)."""
    root = re.escape(package).encode()
    group = b"(?:" + b"|".join(sorted(re.escape(m).encode() for m in modules)) + b")"
    return {
        root + rb"\s*\.\s*" + group,
        root + rb"[\s\\]+import\b",
        rb"import\b(?:[^\n]|\\\r?\n)*" + root,
    }


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


# prefixes that many triggers start with: the triggers after one are searched as one regex,
# `P(?:A|B)` (one scan for P) instead of `PA` and `PB` (two)
_SHARED_PREFIXES = (rb"import[^\n]*\b", rb"import\s*\([^)]*\b", rb"\.", b"[\"']")


def _top_level_bar(regex: bytes) -> bool:
    """Does the regex hold a `|` outside any group (`PA|B` is not `P(?:A|B)`)?"""
    depth, in_class, i = 0, False, 0
    while i < len(regex):
        char = regex[i : i + 1]
        if char == b"\\":
            i += 2
            continue
        if in_class:
            in_class = char != b"]"
        elif char == b"[":
            in_class = True
            if regex[i + 1 : i + 2] == b"^":
                i += 1
            if regex[i + 1 : i + 2] == b"]":
                i += 1  # `[]...]`: the bracket is a member
        elif char == b"(":
            depth += 1
        elif char == b")":
            depth -= 1
        elif char == b"|" and depth == 0:
            return True
        i += 1
    return False


# a regex's plain characters: what an escape before one of these means literally
_ESCAPED_LITERALS = frozenset(b"\\.^$*+?()[]{}|-/'\"#&~ ")
_QUANTIFIERS = frozenset(b"*+?{")
_INLINE_FLAGS = re.compile(rb"\(\?[aiLmsux-]*[iLx]")
# shorter runs are found nearly everywhere: no cheaper than the regex itself
_MIN_GATE = 3


def required_literal(regex: bytes) -> bytes | None:
    """The longest run of plain characters that every match of `regex` contains, taken outside
    groups, classes and quantified characters (`optimum` in `import\\b(?:...)*optimum`); None
    when there is none of `_MIN_GATE` or more characters, or `|` splits the regex at the top.
    Finding it with `in` first costs a fraction of the regex's own scan (its literal prefix
    `import` is on most lines of a file)."""
    if _INLINE_FLAGS.search(regex):
        return None  # `(?i)...`: the characters may be written in another case
    runs: list[bytes] = []
    run = bytearray()
    depth, i = 0, 0

    def close() -> None:
        if run:
            runs.append(bytes(run))
            run.clear()

    while i < len(regex):
        char = regex[i]
        if char == ord("\\") and i + 1 < len(regex):
            escaped = regex[i + 1]
            i += 2
            if depth == 0 and escaped in _ESCAPED_LITERALS:
                run.append(escaped)
                literal = True
            else:
                close()  # `\b`, `\s`, `\n`...: not a plain character
                literal = False
        elif char == ord("["):
            close()
            i += 1
            i += regex[i : i + 1] == b"^"
            i += regex[i : i + 1] == b"]"  # `[]...]`: the bracket is a member
            while i < len(regex) and regex[i] != ord("]"):
                i += 2 if regex[i] == ord("\\") else 1
            i += 1
            continue
        elif char == ord("("):
            close()
            depth += 1
            i += 1
            continue
        elif char == ord(")"):
            depth -= 1
            i += 1
            continue
        elif char == ord("|"):
            if depth == 0:
                return None
            i += 1
            continue
        elif char in b".^$" or depth:
            close()
            i += 1
            continue
        elif char in _QUANTIFIERS:
            close()
            i = _after_quantifier(regex, i)
            continue
        else:
            run.append(char)
            literal = True
            i += 1
        if literal and i < len(regex) and regex[i] in _QUANTIFIERS:
            # `x?`, `x*`, `x{0,2}`: the character before the quantifier may be absent
            run.pop()
            close()
            i = _after_quantifier(regex, i)
    close()
    best = max(runs, key=len, default=b"")
    return best if len(best) >= _MIN_GATE else None


def _after_quantifier(regex: bytes, i: int) -> int:
    """Where the regex goes on after the quantifier at `i` (`{m,n}` whole)."""
    if regex[i] == ord("{"):
        end = regex.find(b"}", i)
        return len(regex) if end < 0 else end + 1
    return i + 1


def _gate(members: list[bytes]) -> tuple[bytes, ...] | None:
    """Literals one of which every match of any of the member regexes contains (None: some
    member has none)."""
    gates = [required_literal(m) for m in members]
    return None if any(g is None for g in gates) else tuple(dict.fromkeys(gates))


def _grouped(triggers: tuple[bytes, ...]) -> list[tuple[bytes, tuple[bytes, ...] | None]]:
    """The regex triggers, those that start with a shared prefix joined under it; each with
    the literals (`_gate`) one of which a file must contain for the regex to be worth running."""
    groups: dict[bytes, list[bytes]] = {}
    alone: list[tuple[bytes, tuple[bytes, ...] | None]] = []
    for trigger in triggers:
        for prefix in _SHARED_PREFIXES:
            rest = trigger[len(prefix) :]
            if (
                trigger.startswith(prefix)
                and rest
                and rest[:1] not in (b"*", b"+", b"?", b"{")
                and not _top_level_bar(trigger)
            ):
                groups.setdefault(prefix, []).append(rest)
                break
        else:
            alone.append((trigger, _gate([trigger])))
    for prefix, rests in groups.items():
        joined = prefix + b"(?:" + b"|".join(rests) + b")" if len(rests) > 1 else prefix + rests[0]
        alone.append((joined, _gate([prefix + rest for rest in rests])))
    return alone


def _minimal(triggers: set[bytes]) -> set[bytes]:
    """Drop a literal trigger that contains another one (`torch_xla` when `xla` is there): the
    regex does the same work with fewer alternatives."""
    literals = {t for t in triggers if not _META.search(t)}
    return {
        t for t in triggers if t not in literals or not any(o != t and o in t for o in literals)
    }


@dataclass
class RuleSet:
    rules: tuple[Rule, ...]
    calls: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    call_patterns: list[Entry] = field(default_factory=list)
    references: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    reference_patterns: list[Entry] = field(default_factory=list)
    imports: list[Entry] = field(default_factory=list)
    device_strings: list[Entry] = field(default_factory=list)
    unused_imports: list[Entry] = field(default_factory=list)
    methods: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    keywords: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    env_writes: list[Entry] = field(default_factory=list)
    # names that code rules report (kind code)
    claimed: dict[str, list[Entry]] = field(default_factory=lambda: defaultdict(list))
    claimed_patterns: list[Entry] = field(default_factory=list)
    # code rules: (rule, its visitor class), and `when` predicates by id(pattern), from the
    # rules' modules, loaded at the first question (load_code): the prefilter needs none of
    # them, and they import LibCST
    _visitors: list[tuple[Rule, type[CodeRule]]] = field(default_factory=list, repr=False)
    _predicates: dict[int, Callable] = field(default_factory=dict, repr=False)
    _code: list[Rule] = field(default_factory=list, repr=False)
    _code_loaded: bool = field(default=False, repr=False)
    # the prefilter's byte regexes: a file is parsed when one of them is found in it
    triggers: tuple[bytes, ...] = ()
    # the calls and references of every loaded rule, enabled or not
    universe: RuleSet | None = None
    # (kind of entry, qualified name) -> the entries _lookup found (RuleSet._memo)
    _found: dict[tuple[str, str], tuple[Entry, ...]] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls, rules: tuple[Rule, ...], universe: tuple[Rule, ...] | None = None, code: bool = True
    ) -> RuleSet:
        """Index `rules`; `universe`: every loaded rule (for `owned_elsewhere`); `code`: load
        the code modules of rules that read Python (a universe needs only their names)."""
        rs = cls(rules=rules)
        if universe is not None and universe != rules:
            rs.universe = cls.build(universe, code=False)
        triggers: set[bytes] = set()
        words: set[bytes] = set()
        # package -> its first modules that names resolved through the imports use
        packages: dict[str, set[str]] = defaultdict(set)
        for rule in rules:
            # a project-file rule's module belongs to the project checker (and imports
            # `packaging`): not loaded for Python
            if (
                code
                and rule.module is not None
                and any(p.kind in PYTHON_KINDS for p in rule.patterns)
            ):
                rs._code.append(rule)
            for pattern in rule.patterns:
                if pattern.kind not in PYTHON_KINDS:
                    continue  # read by another checker (project files)
                rs._add(rule, pattern)
                if pattern.triggers:
                    triggers.update(t.encode() for t in pattern.triggers)
                    continue
                if pattern.kind == "device-string":
                    triggers.update(_device_string_trigger(d) for d in pattern.names)
                    continue
                if pattern.kind == "keyword" and not _distinctive(pattern.names):
                    triggers.update(re.escape(k).encode() for k in pattern.keywords)
                    continue
                kind = "call" if pattern.kind == "keyword" else pattern.kind
                for name in pattern.names:
                    literal, word, package = _name_trigger(name, kind)
                    if literal is not None:
                        triggers.add(literal)
                    if word is not None:
                        words.add(word)
                    if package is not None:
                        packages[package[0]].add(package[1])
        # most specific first
        rs.call_patterns.sort(key=lambda e: -len(e.name))
        rs.reference_patterns.sort(key=lambda e: -len(e.name))
        if words:
            triggers |= _word_triggers(words)
        for package, modules in packages.items():
            if re.escape(package).encode() in triggers:
                continue  # the package's name is a trigger anyway (another rule's)
            triggers |= _package_triggers(package, modules)
        if triggers:
            rs.triggers = tuple(sorted(_minimal(triggers)))
        elif rs.universe is not None and any(
            p.kind == UNREADABLE_KIND for r in rules for p in r.patterns
        ):
            # only the "file not checked" rule is on (`--select NM000`): the files worth
            # parsing are those any loaded rule would read
            rs.triggers = rs.universe.triggers
        return rs

    @property
    def prefilter(self) -> re.Pattern[bytes] | None:
        """The prefilter as one regex (what `wants` answers, for callers that want a pattern)."""
        return re.compile(b"|".join(self.triggers)) if self.triggers else None

    @cached_property
    def _searches(
        self,
    ) -> tuple[tuple[bytes, ...], tuple[tuple[tuple[bytes, ...] | None, re.Pattern[bytes]], ...]]:
        """The triggers as plain words, found with `in`, and as separate regexes, each after
        the literals it needs (`required_literal`). Python's regex engine tries every branch of
        one big alternation at every position of the file; a regex that starts with a literal
        is found by a fast scan for that literal, so separate searches cost several times less
        than the joined pattern, and `in` less again."""
        words = tuple(t for t in self.triggers if not _META.search(t))
        # re's own cache shares the compiled patterns between the rule sets of a run
        # (grouping keeps the plain words out: a shared prefix needs a metacharacter)
        patterns = tuple(
            (gate, re.compile(t)) for t, gate in _grouped(self.triggers) if _META.search(t)
        )
        return words, patterns

    @property
    def visitors(self) -> list[tuple[Rule, type[CodeRule]]]:
        self.load_code()
        return self._visitors

    @property
    def predicates(self) -> dict[int, Callable]:
        self.load_code()
        return self._predicates

    def load_code(self) -> None:
        """Import the code modules of the rules that have one (and with them LibCST)."""
        if self._code_loaded:
            return
        from neuron_migrate.engine.coderule import load_rule_module

        visitors: list[tuple[Rule, type[CodeRule]]] = []
        predicates: dict[int, Callable] = {}
        for rule in self._code:
            assert rule.module is not None
            module = load_rule_module(rule.module)
            if module.visitor is not None:
                visitors.append((rule, module.visitor))
            for pattern in rule.patterns:
                if pattern.when is None:
                    continue
                if pattern.when not in module.predicates:
                    raise LookupError(f"{rule.code}: `when = {pattern.when!r}` names no function")
                predicates[id(pattern)] = module.predicates[pattern.when]
        self._visitors, self._predicates, self._code_loaded = visitors, predicates, True

    def _add(self, rule: Rule, pattern: Pattern) -> None:
        kind = pattern.kind
        if kind == "code":
            # the rule's module reports these names: a catch-all must not report them too
            for name in pattern.names:
                self._index(Entry(rule, pattern, name), name, self.claimed, self.claimed_patterns)
            return
        if kind == "device-string":
            self.device_strings.append(Entry(rule, pattern, ""))
            return
        if kind == "keyword":
            for keyword in pattern.keywords:
                self.keywords[keyword].append(Entry(rule, pattern, keyword))
            return
        for name in pattern.names:
            if kind == "method":
                self.methods[name].append(Entry(rule, pattern, name))
            elif kind in ("import", "unused-import", "env-write"):
                bucket = {
                    "import": self.imports,
                    "unused-import": self.unused_imports,
                    "env-write": self.env_writes,
                }[kind]
                bucket.append(Entry(rule, pattern, name))
            else:
                exact, patterned = (
                    (self.calls, self.call_patterns)
                    if kind == "call"
                    else (self.references, self.reference_patterns)
                )
                self._index(Entry(rule, pattern, name), name, exact, patterned)

    @staticmethod
    def _index(entry: Entry, name: str, exact: dict, patterned: list) -> None:
        if name.endswith(".*") and "*" not in name[:-2]:
            patterned.append(Entry(entry.rule, entry.pattern, name[:-2]))
        elif "*" in name:
            bare = name.replace("**.", "").replace("*", "")
            prefix = name.split("*", 1)[0]
            patterned.append(Entry(entry.rule, entry.pattern, bare, name, prefix))
        else:
            exact[name].append(entry)

    def wants(self, data: bytes) -> bool:
        """The byte-level prefilter: could any enabled rule match in this file?"""
        words, patterns = self._searches
        return any(w in data for w in words) or any(
            p.search(data) for gate, p in patterns if gate is None or any(g in data for g in gate)
        )

    @staticmethod
    def _lookup(qname: str, exact: dict[str, list[Entry]], patterned: list[Entry]) -> list[Entry]:
        found = list(exact.get(qname, ()))
        for entry in patterned:
            if entry.glob_name is not None:
                if qname.startswith(entry.prefix) and entry.glob.match(qname):
                    found.append(entry)
            elif qname == entry.name or qname.startswith(entry.name + "."):
                found.append(entry)
        return found

    def exact_names(self) -> set[str]:
        """Every qualified name some enabled rule matches exactly (no glob)."""
        return set(self.calls) | set(self.references)

    def call_entries(self, qname: str) -> list[Entry]:
        return list(self._memo(qname, "call", self.calls, self.call_patterns))

    def reference_entries(self, qname: str) -> list[Entry]:
        return list(self._memo(qname, "reference", self.references, self.reference_patterns))

    def _memo(self, qname: str, which: str, exact: dict, patterned: list) -> tuple[Entry, ...]:
        """_lookup, remembered per name: a file asks about the same names again and again,
        and each question tries every patterned entry."""
        key = (which, qname)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = tuple(self._lookup(qname, exact, patterned))
        return found

    def claimed_by_code(self, qname: str, longest: int) -> bool:
        """Does a code rule report `qname` (more specifically than `longest`)?"""
        entries = self._memo(qname, "claimed", self.claimed, self.claimed_patterns)
        return any(len(e.name) > longest for e in entries)

    def owned_elsewhere(self, qname: str, longest: int, call: bool) -> bool:
        """Does a rule that is not enabled name `qname` more specifically than `longest`?"""
        if self.universe is None:
            return False
        entries = self.universe.reference_entries(qname)
        if call:
            entries += self.universe.call_entries(qname)
        return any(len(e.name) > longest for e in entries)
