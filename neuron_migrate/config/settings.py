"""Settings: `[tool.neuron-migrate]` in the nearest pyproject.toml, merged with command-line options."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from neuron_migrate.config.dependencies import pinned_packages
from neuron_migrate.config.tomlread import tomllib
from neuron_migrate.packs.loader import Rule, builtin_rules_dir

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "build",
    "dist",
    "__pycache__",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".neuron_migrate_cache",
    "site-packages",
)
# the devices a fix may write (rules/targets.toml has one table each)
TARGET_DEVICES = ("neuron", "cpu", "cuda")


class ConfigError(Exception):
    """A configuration the run cannot use (exit code 2)."""


@dataclass(frozen=True)
class Target:
    device: str
    compile_backend: str
    process_group: str
    synchronize: str

    def placeholders(self) -> dict[str, str]:
        """What `{device}` and friends become in an action's template."""
        return {
            "device": f'"{self.device}"',
            "device_name": self.device,
            # the device as a PJRT runtime names its kind ("NEURON", "CPU", "CUDA")
            "device_kind": f'"{self.device.upper()}"',
            "backend": f'"{self.compile_backend}"',
            "process_group": f'"{self.process_group}"',
            "synchronize": self.synchronize,
        }


def load_target(device: str) -> Target:
    data = tomllib.loads((builtin_rules_dir() / "targets.toml").read_text(encoding="utf-8"))
    if device not in TARGET_DEVICES or device not in data["target"]:
        raise ConfigError(f"target-device {device!r} is not one of {', '.join(TARGET_DEVICES)}")
    entry = data["target"][device]
    return Target(
        device=device,
        compile_backend=entry["compile-backend"],
        process_group=entry["process-group"],
        synchronize=entry["synchronize"],
    )


@dataclass(frozen=True)
class Settings:
    # None: the default packs (every pack whose pack.toml does not say `default = false`)
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    target_device: str = "neuron"
    compile: bool = False
    packs: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)
    config_path: Path | None = None
    # packages the project's dependency files list (config/dependencies.py): a fact code rules
    # read as the setting `pinned:<package>`; empty unless load_settings read the project
    pinned: frozenset[str] = frozenset()

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def target(self) -> Target:
        return load_target(self.target_device)

    def fingerprint(self) -> str:
        """What the results depend on besides the file itself (for the cache)."""
        return repr(
            (
                self.select,
                self.extend_select,
                self.ignore,
                sorted(self.per_file_ignores.items()),
                self.target_device,
                self.compile,
                self.packs,
                sorted(self.pinned),
            )
        )

    def flags(self) -> dict[str, bool]:
        """The settings code rules read with `ctx.setting(name)`: `compile`, `pinned:<package>`."""
        return {"compile": self.compile, **{f"pinned:{name}": True for name in self.pinned}}


_KEYS = {
    "select": "codes",
    "extend-select": "codes",
    "ignore": "codes",
    "per-file-ignores": "table",
    "exclude": "globs",
    "extend-exclude": "globs",
    "target-device": "str",
    "compile": "bool",
    "packs": "globs",
}


def _check(path: Path, key: str, value: Any) -> Any:
    kind = _KEYS[key]
    where = f"{path}: [tool.neuron-migrate] {key}"
    if kind in ("codes", "globs"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: expected a list of strings")
        return tuple(value)
    if kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false")
        return value
    if not isinstance(value, dict) or not all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()
    ):
        raise ConfigError(f"{where}: expected a table of glob = [codes]")
    return {glob: tuple(codes) for glob, codes in value.items()}


def _section(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table")
    section = tool.get("neuron-migrate")
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.neuron-migrate] must be a table, not {section!r}")
    return section


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.neuron-migrate] table, from start upwards."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                if _section(candidate) is not None:
                    return candidate
            except ConfigError:
                return candidate  # let load_settings report it
    return None


def load_settings(config: Path | None, start: Path) -> Settings:
    """Settings from an explicit --config file, else from the nearest pyproject.toml."""
    path = config or find_config(start)
    if path is None:
        root = start.resolve() if start.is_dir() else start.resolve().parent
        return Settings(root=root, pinned=pinned_packages(root))
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    section = _section(path) or {}
    values: dict[str, Any] = {}
    for key, value in section.items():
        if key not in _KEYS:
            raise ConfigError(f"{path}: [tool.neuron-migrate]: unknown setting `{key}`")
        values[key.replace("-", "_")] = _check(path, key, value)
    root = path.resolve().parent
    if "packs" in values:
        values["packs"] = tuple(str((root / p).resolve()) for p in values["packs"])
    settings = Settings(
        root=root, config_path=path.resolve(), pinned=pinned_packages(root), **values
    )
    try:
        settings.target  # validates target-device early  # noqa: B018
    except ConfigError as exc:
        raise ConfigError(f"{path}: [tool.neuron-migrate] {exc}") from None
    return settings


_LETTERS = re.compile(r"[A-Z]*")


def covers(selector: str, rule: Rule) -> bool:
    """Does a selector (a code, a code prefix, a name or ALL; any case) name this rule?"""
    return _specificity(selector, rule) >= 0


def _specificity(selector: str, rule: Rule) -> int:
    """How specifically a selector names a rule: -1 not at all, else the prefix length.
    Codes, prefixes and ALL are read in any case, as `explain` reads them.

    A prefix names the rules whose code starts with it *and* has the same letters, as ruff's
    linter prefixes do: `NM` and `NM1` select NM101 but not NMC101 (an opt-in pack), `NMC`
    selects NMC101. `ALL` names every rule, opt-in packs included (ruff's `ALL`)."""
    upper = selector.upper()
    if upper == "ALL":
        return 0
    if selector.lower() == rule.name:
        return 99
    letters = _LETTERS.match(upper).group()
    if rule.code.startswith(upper) and _LETTERS.match(rule.code).group() == letters:
        return len(upper)
    return -1


def validate_selectors(selectors: tuple[str, ...], rules: tuple[Rule, ...], what: str) -> None:
    for selector in selectors:
        if not any(_specificity(selector, rule) >= 0 for rule in rules):
            raise ConfigError(f"{what}: unknown rule selector `{selector}`")


def enabled(
    rule: Rule, select: tuple[str, ...], ignore: tuple[str, ...], by_default: bool = False
) -> bool:
    """ruff's resolution: the most specific selector wins; on a tie, ignore wins.
    `by_default`: no `select` was given, so the default packs count as selected."""
    best_select = max((_specificity(s, rule) for s in select), default=-1)
    if by_default and rule.default:
        best_select = max(best_select, 0)
    best_ignore = max((_specificity(s, rule) for s in ignore), default=-1)
    return best_select >= 0 and best_select > best_ignore


def select_rules(settings: Settings, rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    by_default = settings.select is None
    select = (settings.select or ()) + settings.extend_select
    for what, selectors in (("select", select), ("ignore", settings.ignore)):
        validate_selectors(selectors, rules, what)
    where = f"{settings.config_path}: " if settings.config_path else ""
    for glob, codes in settings.per_file_ignores.items():
        validate_selectors(codes, rules, f"{where}per-file-ignores {glob!r}")
    return tuple(
        r
        for r in rules
        if enabled(r, select, settings.ignore, by_default)
        # a pack that moves code off a device has nothing to do when that device is the target
        and r.from_device != settings.target_device
    )


def path_matches(relative: str, pattern: str) -> bool:
    """A glob against a path relative to the project root; a pattern without / also matches names."""
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*"):
        return True
    if "/" not in pattern:
        return any(fnmatch.fnmatch(part, pattern) for part in relative.split("/"))
    return False


def ignored_codes_for(settings: Settings, relative: str) -> tuple[str, ...]:
    codes: list[str] = []
    for glob, selectors in settings.per_file_ignores.items():
        if path_matches(relative, glob):
            codes.extend(selectors)
    return tuple(codes)
