"""The packages a project pins, read once per run from its dependency files.

Some findings depend on the project rather than the file: TorchAO on the neuron device is a
beta limit unless the project installs TorchAO Neuron (`torchao-neuron`). Settings carry the
pinned names as a fact; a code rule reads it with `ctx.setting("pinned:torchao-neuron")`.

Read: requirements*.txt / constraints*.txt, pyproject.toml (PEP 621 dependencies and optional
dependencies, Poetry dependencies and groups) and setup.cfg (install_requires, extras_require)
in the project folder: the settings root, or the nearest folder above it that has one of them.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from neuron_migrate.config.tomlread import tomllib

_PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_REQUIREMENT_GLOBS = ("requirements*.txt", "constraints*.txt", "requirements/*.txt")
# the distribution name at the start of a requirement: `torchao-neuron==0.18 ; python>="3.12"`
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# stop at the filesystem root; a project deeper than this is not guessed at
_MAX_PARENTS = 8


def canonical(name: str) -> str:
    """PEP 503 normalized name: `TorchAO_Neuron` -> `torchao-neuron`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_folder(root: Path) -> Path | None:
    """The folder whose dependency files describe the project checked from `root`."""
    folder = root.resolve()
    for candidate in [folder, *folder.parents][:_MAX_PARENTS]:
        if any((candidate / name).is_file() for name in _PROJECT_FILES):
            return candidate
        if any(next(candidate.glob(glob), None) for glob in _REQUIREMENT_GLOBS):
            return candidate
        if (candidate / ".git").exists():
            return None
    return None


def _names(requirements: list[str]) -> set[str]:
    names = set()
    for text in requirements:
        found = _NAME_RE.match(text.split("#", 1)[0])
        if found and not text.lstrip().startswith("-"):
            names.add(canonical(found.group(1)))
    return names


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _pyproject(path: Path) -> set[str]:
    try:
        data = tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError:
        return set()
    project = data.get("project", {})
    found = list(project.get("dependencies", []) or [])
    for extra in (project.get("optional-dependencies", {}) or {}).values():
        found += list(extra or [])
    poetry = data.get("tool", {}).get("poetry", {})
    names = _names([str(r) for r in found if isinstance(r, str)])
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    tables += [g.get("dependencies", {}) for g in (poetry.get("group", {}) or {}).values()]
    for table in tables:
        if isinstance(table, dict):
            names |= {canonical(name) for name in table}
    return names


def _setup_cfg(path: Path) -> set[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_read(path))
    except configparser.Error:
        return set()
    lines = []
    if parser.has_option("options", "install_requires"):
        lines += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            lines += value.splitlines()
    return _names([line for line in lines if line.strip()])


def pinned_packages(root: Path) -> frozenset[str]:
    """Normalized names of every package the project's dependency files list."""
    folder = project_folder(root)
    if folder is None:
        return frozenset()
    names: set[str] = set()
    for glob in _REQUIREMENT_GLOBS:
        for path in sorted(folder.glob(glob)):
            names |= _names(_read(path).splitlines())
    if (folder / "pyproject.toml").is_file():
        names |= _pyproject(folder / "pyproject.toml")
    if (folder / "setup.cfg").is_file():
        names |= _setup_cfg(folder / "setup.cfg")
    return frozenset(names)
