"""Load and validate rule packs (rules/*.toml) into Rule objects.

A pack is data: codes, names, messages, what to match and which named action fixes it.
The engine knows the kinds of match and the actions; it knows no rule by name.
The parsed TOML of packs that loaded is kept as JSON (packs.store), keyed on every pack file's
path and bytes: a run whose packs have not changed builds the same rules from it, through the
same validation, without the TOML parser.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from neuron_migrate import __version__
from neuron_migrate.config.tomlread import tomllib
from neuron_migrate.model import Safety, Severity
from neuron_migrate.packs import store
from neuron_migrate.packs.vocabulary import (
    ACTION_PARAMS,
    ALL_KINDS,
    ARGS,
    PATTERN_KEYS,
    PROJECT_DATA_ITEMS,
    PROJECT_ITEMS,
    PROJECT_KINDS,
    WHERE,
)

RULE_KEYS = {
    "code",
    "name",
    "severity",
    "message",
    "why",
    "fix",
    "source",
    "match",
    "example",
    "ok",
}
PACK_FILE = "pack.toml"  # a pack folder's name and shared lists
# NM123 for the default packs; an opt-in pack adds a letter after NM (NMC101) so that the
# selector `NM` keeps meaning the default packs (selectors match on the whole letter prefix)
CODE_RE = re.compile(r"^NM[A-Z]?[0-9]{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class PackError(Exception):
    """A rule pack that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Pattern:
    kind: str
    names: tuple[str, ...] = ()
    where: str = "any"
    args: str = "any"
    when: str | None = None
    action: str | None = None
    safety: Safety | None = None
    message: str | None = None
    triggers: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    no_keywords: tuple[str, ...] = ()
    keyword_values: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    values: tuple[str, ...] = ()
    unused: bool | None = None
    case: str | None = None
    arg_values: dict[int, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)
    target_devices: tuple[str, ...] = ()
    reads: str | None = None
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Example:
    before: str
    after: str | None
    # the file the example is (its name picks the checker: requirements.txt, run.sh, ...)
    file: str = "snippet.py"
    settings: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    pack: str
    severity: Severity
    message: str
    why: str
    fix_text: str
    source: str
    patterns: tuple[Pattern, ...]
    examples: tuple[Example, ...]
    ok: tuple[str, ...]
    # the file each `ok` snippet is (its name picks the checker), beside `ok`
    ok_files: tuple[str, ...] = ()
    # the rule's code module (same stem as its TOML file, built-in packs only), or None
    module: str | None = None
    # the pack's `default`: false for an opt-in pack (enabled by selecting its prefix or ALL)
    default: bool = True
    # the pack's `from-device`: the device its code moves away from; the pack has nothing
    # to say when that device is the target (`--target-device cuda` leaves CUDA code alone)
    from_device: str | None = None
    # the pack's `[lists]`, for code modules that read the pack's shared facts
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)

    @property
    def fix_safety(self) -> str:
        """What the rule can do, for tables: safe, unsafe, manual, or a mix like 'safe / manual'."""
        kinds = []
        for pattern in self.patterns:
            kind = pattern.safety.value if pattern.safety else "manual"
            if kind not in kinds:
                kinds.append(kind)
        order = ["safe", "unsafe", "manual"]
        return " / ".join(sorted(kinds, key=order.index))


def _fail(path: Path, where: str, what: str) -> PackError:
    return PackError(f"{path}: {where}: {what}")


def _str(path: Path, where: str, data: dict, key: str, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise _fail(path, where, f"missing required field `{key}`")
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, where, f"`{key}` must be a non-empty string")
    return value


def _str_list(path: Path, where: str, data: dict, key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(path, where, f"`{key}` must be a list of strings")
    return tuple(value)


def _str_table(path: Path, where: str, data: dict, key: str) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _fail(path, where, f"`{key}` must be a table of strings")
    return dict(value)


def _arg_values(path: Path, where: str, data: dict) -> dict[int, tuple[str, ...]]:
    value = data.get("arg-values", {})
    if not isinstance(value, dict):
        raise _fail(path, where, "`arg-values` must be a table of index = [values]")
    out = {}
    for index in value:
        if not index.isdigit():
            raise _fail(path, where, f"`arg-values`: {index!r} is not a position")
        out[int(index)] = _str_list(path, where, value, index)
    return out


def _bool(path: Path, where: str, data: dict, key: str) -> bool | None:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise _fail(path, where, f"`{key}` must be true or false")
    return value


def _pattern(path: Path, where: str, data: Any) -> Pattern:
    if not isinstance(data, dict):
        raise _fail(path, where, "must be a table")
    unknown = sorted(set(data) - PATTERN_KEYS)
    if unknown:
        raise _fail(path, where, f"unknown field `{unknown[0]}`")
    kind = _str(path, where, data, "kind")
    if kind not in ALL_KINDS:
        raise _fail(path, where, f"`kind` must be one of {sorted(ALL_KINDS)}, not {kind!r}")
    names = _str_list(path, where, data, "names")
    if (
        kind in {"call", "reference", "import", "unused-import", "method", "env-write"}
        and not names
    ):
        raise _fail(path, where, f"`names` is required for kind {kind!r}")
    where_value = data.get("where", "any")
    if where_value not in WHERE:
        raise _fail(path, where, f"`where` must be one of {sorted(WHERE)}")
    args = data.get("args", "any")
    if args not in ARGS:
        raise _fail(path, where, f"`args` must be one of {sorted(ARGS)}")
    when = _str(path, where, data, "when", required=False)
    if when is not None and not when.isidentifier():
        raise _fail(path, where, "`when` must name a function of the rule's code module")
    case = _str(path, where, data, "case", required=False)
    if kind == "code" and case is None:
        raise _fail(path, where, "kind code needs a `case` (the label its module reports with)")
    if case is not None and kind not in PROJECT_KINDS | {"code"}:
        raise _fail(path, where, "`case` goes with kinds code and project")
    if case is not None and not NAME_RE.match(case):
        raise _fail(path, where, "`case` must be kebab-case")
    reads = _str(path, where, data, "reads", required=kind in PROJECT_KINDS)
    if kind in PROJECT_KINDS and reads not in PROJECT_ITEMS:
        raise _fail(path, where, f"`reads` must be one of {sorted(PROJECT_ITEMS)}, not {reads!r}")
    if reads is not None and kind not in PROJECT_KINDS:
        raise _fail(path, where, "`reads` goes with kind project")
    action = data.get("action")
    safety = data.get("safety")
    params: dict[str, Any] = {}
    if action is not None:
        if action not in ACTION_PARAMS:
            raise _fail(path, where, f"unknown action {action!r}; known: {sorted(ACTION_PARAMS)}")
        if safety not in ("safe", "unsafe"):
            raise _fail(path, where, "`safety` must be 'safe' or 'unsafe' when there is an action")
        allowed = ACTION_PARAMS[action]
        for key in set(data) & (PATTERN_KEYS - allowed):
            if any(key in other for other in ACTION_PARAMS.values()):
                raise _fail(path, where, f"field `{key}` does not go with action {action!r}")
        params = {key: data[key] for key in allowed if key in data}
    elif safety is not None and kind not in PROJECT_KINDS | {"code"}:
        raise _fail(path, where, "`safety` without an `action`")
    else:
        if safety is not None and safety not in ("safe", "unsafe"):
            raise _fail(path, where, "`safety` must be 'safe' or 'unsafe'")
        for key in data:
            if any(key in other for other in ACTION_PARAMS.values()):
                raise _fail(path, where, f"field `{key}` needs an `action`")
    triggers = _str_list(path, where, data, "triggers")
    for trigger in triggers:
        try:
            re.compile(trigger.encode())
        except re.error as exc:
            raise _fail(path, where, f"trigger {trigger!r} is not a valid regex: {exc}") from None
    return Pattern(
        kind=kind,
        names=names,
        where=where_value,
        args=args,
        when=when,
        case=case,
        reads=reads,
        action=action,
        safety=Safety(safety) if safety else None,
        message=_str(path, where, data, "message", required=False),
        triggers=triggers,
        keywords=_str_list(path, where, data, "keywords"),
        no_keywords=_str_list(path, where, data, "no-keywords"),
        keyword_values=_str_table(path, where, data, "keyword-values"),
        values=_str_list(path, where, data, "values"),
        unused=_bool(path, where, data, "unused"),
        arg_values=_arg_values(path, where, data),
        target_devices=_str_list(path, where, data, "target-devices"),
        params=params,
    )


def _ok(path: Path, where: str, data: dict) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`ok` snippets: plain strings (Python), or tables `{ file = "run.sh", code = "..." }`."""
    value = data.get("ok", [])
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        raise _fail(path, where, "`ok` must be a list of strings or tables")
    codes, files = [], []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            unknown = sorted(set(item) - {"file", "code"})
            if unknown:
                raise _fail(path, f"{where}: ok #{i + 1}", f"unknown field `{unknown[0]}`")
            codes.append(_str(path, f"{where}: ok #{i + 1}", item, "code"))
            files.append(_str(path, f"{where}: ok #{i + 1}", item, "file"))
        elif isinstance(item, str) and item:
            codes.append(item)
            files.append("snippet.py")
        else:
            raise _fail(path, where, "`ok` must be a list of strings or tables")
    return tuple(codes), tuple(files)


def _rule(path: Path, pack: PackInfo, index: int, data: Any) -> Rule:
    where = f"rule #{index + 1}"
    if not isinstance(data, dict):
        raise _fail(path, where, "must be a table")
    code = _str(path, where, data, "code")
    where = f"rule {code}"
    unknown = sorted(set(data) - RULE_KEYS)
    if unknown:
        raise _fail(path, where, f"unknown field `{unknown[0]}`")
    # the letter after NM marks an opt-in pack's code, and only an opt-in pack's
    if not CODE_RE.match(code) or pack.default != code[2].isdigit():
        raise _fail(
            path,
            where,
            "`code` must be NM and three digits (NM, a capital letter and three digits in an "
            "opt-in pack)",
        )
    name = _str(path, where, data, "name")
    if not NAME_RE.match(name):
        raise _fail(path, where, "`name` must be kebab-case")
    severity = _str(path, where, data, "severity")
    if severity not in {s.value for s in Severity}:
        raise _fail(path, where, "`severity` must be error, warning or info")
    matches = data.get("match")
    if not isinstance(matches, list) or not matches:
        raise _fail(path, where, "needs at least one [[rule.match]]")
    patterns = tuple(_pattern(path, f"{where}: match #{i + 1}", m) for i, m in enumerate(matches))
    cases = [p.case for p in patterns if p.case is not None]
    if len(cases) != len(set(cases)):
        raise _fail(path, where, "two matches have the same `case`")
    examples = []
    for i, ex in enumerate(data.get("example", [])):
        ex_where = f"{where}: example #{i + 1}"
        if not isinstance(ex, dict):
            raise _fail(path, ex_where, "must be a table")
        unknown = sorted(set(ex) - {"before", "after", "settings", "file"})
        if unknown:
            raise _fail(path, ex_where, f"unknown field `{unknown[0]}`")
        settings = ex.get("settings", {})
        if not isinstance(settings, dict):
            raise _fail(path, ex_where, "`settings` must be a table")
        examples.append(
            Example(
                before=_str(path, ex_where, ex, "before"),
                after=_str(path, ex_where, ex, "after", required=False),
                file=_str(path, ex_where, ex, "file", required=False) or "snippet.py",
                settings=settings,
            )
        )
    ok = _ok(path, where, data)
    return Rule(
        code=code,
        name=name,
        pack=pack.name,
        default=pack.default,
        from_device=pack.from_device,
        severity=Severity(severity),
        message=_str(path, where, data, "message"),
        why=_str(path, where, data, "why"),
        fix_text=_str(path, where, data, "fix"),
        source=_str(path, where, data, "source"),
        patterns=patterns,
        examples=tuple(examples),
        ok=ok[0],
        ok_files=ok[1],
    )


def _expand(value: Any, lists: dict[str, list[str]], path: Path) -> Any:
    """`"@name"` in a list of strings stands for the pack's `[lists] name = [...]`, so that a
    list shared by several rules is written once."""
    if isinstance(value, dict):
        return {k: _expand(v, lists, path) for k, v in value.items()}
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            if isinstance(item, str) and item.startswith("@"):
                if item[1:] not in lists:
                    raise _fail(path, "[lists]", f"no list named `{item[1:]}`")
                out.extend(lists[item[1:]])
            else:
                out.append(_expand(item, lists, path))
        return out
    return value


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PackError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PackError(f"{path}: not valid TOML: {exc}") from None


Read = Callable[[Path], dict[str, Any]]


@dataclass(frozen=True)
class PackInfo:
    """What `[pack]` says about every rule of the pack."""

    name: str
    default: bool = True
    from_device: str | None = None


PACK_KEYS = {"name", "description", "default", "from-device"}


def _pack_header(path: Path, data: dict[str, Any]) -> tuple[PackInfo, dict[str, list[str]]]:
    pack = data.get("pack", {})
    if not isinstance(pack, dict) or not isinstance(pack.get("name"), str):
        raise _fail(path, "[pack]", "missing required field `name`")
    unknown = sorted(set(pack) - PACK_KEYS)
    if unknown:
        raise _fail(path, "[pack]", f"unknown field `{unknown[0]}`")
    default = _bool(path, "[pack]", pack, "default")
    info = PackInfo(
        name=pack["name"],
        default=True if default is None else default,
        from_device=_str(path, "[pack]", pack, "from-device", required=False),
    )
    lists = data.get("lists", {})
    if not isinstance(lists, dict) or not all(
        isinstance(v, list) and all(isinstance(i, str) for i in v) for v in lists.values()
    ):
        raise _fail(path, "[lists]", "each entry must be a list of strings")
    # a list may name the lists written before it (`["torch-neuronx", "@xla-backend"]`)
    expanded: dict[str, list[str]] = {}
    for key, value in lists.items():
        expanded[key] = _expand(value, expanded, path)
    return info, expanded


def _with_lists(rule: Rule, lists: dict[str, list[str]]) -> Rule:
    return replace(rule, lists={k: tuple(v) for k, v in lists.items()})


def load_pack(path: Path, with_code: bool = False, read: Read = _read_toml) -> list[Rule]:
    """Read one pack: a folder (`pack.toml` with `[pack]` and `[lists]`, then one file per
    rule whose top-level keys are the rule's) or a single file with `[[rule]]` tables.
    `with_code`: the rules' code modules may run (built-in packs: a user's pack is data, so
    that checking a repository never runs code its configuration names).
    `read`: a file's TOML document (parsed, or from the pack cache).
    Raises PackError naming the file and the field."""
    if path.is_dir():
        return _load_pack_dir(path, with_code, read)
    data = read(path)
    info, lists = _pack_header(path, data)
    rules = data.get("rule")
    if not isinstance(rules, list) or not rules:
        raise _fail(path, "[[rule]]", "a pack needs at least one rule")
    rules = [_expand(rule, lists, path) for rule in rules]
    return [
        _needs_code(path, _with_lists(_rule(path, info, i, r), lists)) for i, r in enumerate(rules)
    ]


def rule_files(folder: Path) -> list[Path]:
    """The rule files of a pack folder, in code order."""
    return sorted(p for p in folder.glob("*.toml") if p.name != PACK_FILE)


def _load_pack_dir(folder: Path, with_code: bool, read: Read) -> list[Rule]:
    header = folder / PACK_FILE
    info, lists = _pack_header(header, read(header))
    files = rule_files(folder)
    if not files:
        raise _fail(folder, "rules", "a pack needs at least one rule file")
    rules = []
    for file in files:
        rule = _with_lists(_rule(file, info, 0, _expand(read(file), lists, file)), lists)
        code = file.with_suffix(".py")
        module = str(code) if with_code and code.is_file() else None
        rules.append(_needs_code(file, replace(rule, module=module)))
    return rules


def _needs_code(path: Path, rule: Rule) -> Rule:
    """A `when` predicate or a kind "code" table needs the rule's code module; so does a kind
    "project" table with a fix, or one reading an item a data case cannot read."""
    if rule.module is None:
        for pattern in rule.patterns:
            if pattern.when is not None or pattern.kind == "code":
                raise _fail(
                    path,
                    f"rule {rule.code}",
                    "`when` and kind code need a code module beside the rule file "
                    "(built-in packs only: a user's pack is data)",
                )
            if pattern.kind in PROJECT_KINDS and (
                pattern.safety is not None
                or pattern.reads not in PROJECT_DATA_ITEMS
                or not pattern.names
            ):
                raise _fail(
                    path,
                    f"rule {rule.code}",
                    f"the case reading {pattern.reads!r} needs a code module {path.stem}.py "
                    "beside the rule file, in a built-in pack (a user's pack is data: a case "
                    "has `names`, no `safety`, and reads "
                    f"{', '.join(sorted(PROJECT_DATA_ITEMS))})",
                )
    return rule


def pack_sources(folder: Path) -> list[Path]:
    """Every file of the built-in packs (their text keys the cache)."""
    return sorted(p for p in folder.rglob("*") if p.suffix in (".toml", ".py") and p.is_file())


def builtin_rules_dir() -> Path:
    """rules/ inside the installed package (wheel), else beside the package (source checkout)."""
    here = Path(__file__).resolve().parents[1]  # the neuron_migrate package
    for candidate in (here / "rules", here.parent / "rules"):
        if (candidate / "targets.toml").is_file():
            return candidate
    raise PackError(f"built-in rule packs not found next to {here}")


def digest(*parts: bytes) -> str:
    """A short hash of byte strings, each length-prefixed (the pack cache's key here, the
    results cache's keys in workspace/cache.py)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


@dataclass(frozen=True)
class PackFiles:
    """Every file of the packs of a run (built-in and the user's, `.py` modules included), read
    once: their bytes key the pack cache here and the results cache (workspace.cache)."""

    paths: tuple[Path, ...]
    data: dict[Path, bytes]  # the files that could be read
    # the files' texts, in order (an unreadable one counts as its path)
    digest: str
    # the pack cache's key: the digest, the files' paths and the tool's version
    key: str


def read_pack_files(extra: tuple[str, ...] = ()) -> PackFiles:
    paths = pack_sources(builtin_rules_dir())
    for pack in map(Path, extra):
        # a user's pack is a file of [[rule]] tables or a folder like the built-in ones
        paths += pack_sources(pack) if pack.is_dir() else [pack]
    data = {}
    for path in paths:
        with contextlib.suppress(OSError):
            data[path] = path.read_bytes()
    texts = digest(*(data.get(path, str(path).encode()) for path in paths))
    key = digest(__version__.encode(), texts.encode(), *(str(p).encode() for p in paths))
    return PackFiles(tuple(paths), data, texts, key)


class _Documents:
    """The TOML documents of one load: from the pack cache when it has them, else parsed from
    the bytes read for its key. `parsed`: the documents parsed, all of them from those bytes
    when `complete` (then the load may be stored under the key)."""

    def __init__(self, files: PackFiles, cached: dict[str, Any]):
        self.files = files
        self.cached = cached
        self.docs: dict[str, Any] = {}
        self.parsed = False
        self.complete = True

    def __call__(self, path: Path) -> dict[str, Any]:
        name = str(path)
        doc = self.cached.get(name)
        if doc is None:
            doc = self._parse(path)
            self.parsed = True
        self.docs[name] = doc
        return doc

    def _parse(self, path: Path) -> dict[str, Any]:
        data = self.files.data.get(path)
        if data is not None:
            try:
                # as path.read_text does it: UTF-8, universal newlines
                text = data.decode("utf-8")
                if "\r" in text:
                    text = text.replace("\r\n", "\n").replace("\r", "\n")
                return tomllib.loads(text)
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                pass
        # not among the bytes read, or broken: _read_toml says what is wrong in its own words
        self.complete = False
        return _read_toml(path)


def _load_packs(extra: tuple[str, ...], read: Read) -> tuple[Rule, ...]:
    builtin = sorted(p for p in builtin_rules_dir().iterdir() if (p / PACK_FILE).is_file())
    paths = [(p, True) for p in builtin] + [(Path(p), False) for p in extra]
    rules: list[Rule] = []
    seen: dict[str, Path] = {}
    for path, with_code in paths:
        for rule in load_pack(path, with_code, read):
            for key in (rule.code, rule.name):
                if key in seen:
                    raise PackError(
                        f"{path}: rule {rule.code}: `{key}` is also defined in {seen[key]}"
                    )
                seen[key] = path
            rules.append(rule)
    return tuple(sorted(rules, key=lambda r: r.code))


# the digest of the pack files each set of user packs was last loaded from (pack_digest)
_LOADED: dict[tuple[str, ...], str] = {}


@lru_cache(maxsize=8)
def _load_all(extra: tuple[str, ...]) -> tuple[Rule, ...]:
    files = read_pack_files(extra)
    documents = _Documents(files, store.read(files.key) or {})
    try:
        rules = _load_packs(extra, documents)  # a broken pack raises: it is never stored
    except Exception:
        if not documents.cached:
            raise
        # packs that loaded once load again from the same documents: an entry that does not
        # is damaged, a miss (and the TOML says what is wrong, if anything is)
        documents = _Documents(files, {})
        rules = _load_packs(extra, documents)
    if documents.parsed and documents.complete:
        store.write(files.key, documents.docs)
    _LOADED.pop(extra, None)
    _LOADED[extra] = files.digest
    while len(_LOADED) > 8:
        del _LOADED[next(iter(_LOADED))]
    return rules


def load_rules(extra_packs: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    """Every rule of the built-in packs plus the user's packs, sorted by code."""
    return _load_all(tuple(extra_packs))


def pack_digest(extra_packs: tuple[str, ...] = ()) -> str:
    """The digest of every pack file's text (PackFiles.digest): of the files the rules of
    `load_rules(extra_packs)` were read from once they are loaded (so that results keyed on it
    are those of these rules, and the files are not read twice), else of the files now."""
    extra = tuple(extra_packs)
    loaded = _LOADED.get(extra)
    return loaded if loaded is not None else read_pack_files(extra).digest
