"""Which files a run reads: the paths given, minus .gitignore, excludes and common folders."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_migrate.config.settings import DEFAULT_EXCLUDES, Settings, path_matches
from neuron_migrate.workspace.filekinds import kind_of

if TYPE_CHECKING:
    import pathspec


@dataclass(frozen=True)
class Discovered:
    path: Path
    # why a path could not be used (missing, unreadable folder, ...); None for a file to check
    problem: str | None = None
    # the path with links resolved, when discovery knows it already
    real: Path | None = None


def resolve(path: Path) -> Path:
    """The absolute path with links resolved, as far as they go: a link loop or a dangling
    link stays as it is (Path.resolve raises RuntimeError on a loop before Python 3.13)."""
    return Path(os.path.realpath(path))


def _relative(path: Path, root: Path, real: Path | None = None) -> str:
    try:
        return (real or resolve(path)).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    ignore_file = folder / ".gitignore"
    try:
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec  # only where there is a .gitignore

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _git_root(folder: Path) -> Path | None:
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


class _Ignores:
    """The .gitignore files that apply in a folder: each one's folder and its patterns."""

    def __init__(self, start: Path):
        self.specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
        root = _git_root(start)
        if root is not None:
            chain = [start, *start.parents]
            for folder in reversed(chain[: chain.index(root) + 1]):
                spec = _gitignore(folder)
                if spec is not None:
                    self.specs.append((folder, spec))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for folder, spec in self.specs:
            try:
                rel = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + ("/" if is_dir else "")):
                return True
        return False


def _excluded(path: Path, settings: Settings, real: Path | None = None) -> bool:
    if path.name in DEFAULT_EXCLUDES:
        return True
    patterns = settings.exclude + settings.extend_exclude
    if not patterns:
        return False
    rel = _relative(path, settings.root, real)
    return any(path_matches(rel, p) for p in patterns)


def is_excluded(path: Path, settings: Settings) -> bool:
    """Would discovery skip this file (an exclude, a default-excluded folder on its way, or a
    .gitignore)? For --force-exclude, where pre-commit names files explicitly."""
    if _excluded(path, settings):
        return True
    resolved = resolve(path)
    try:
        parts = resolved.relative_to(settings.root).parts[:-1]
    except ValueError:
        parts = path.parts[:-1]
    if any(part in DEFAULT_EXCLUDES for part in parts):
        return True
    return _Ignores(resolved.parent).ignored(resolved, False)


def discover(
    paths: list[Path], settings: Settings, force_exclude: bool = False
) -> Iterator[Discovered]:
    """Files to check, in a stable order. A file named on the command line is read even when
    excluded (as ruff does), unless force_exclude."""
    seen: set[Path] = set()
    for given in paths:
        if not given.exists() and not given.is_symlink():
            yield Discovered(given, "no such file or folder")
            continue
        if given.is_dir():
            yield from _walk(given, settings, seen)
        elif force_exclude and is_excluded(given, settings):
            continue
        else:
            key = resolve(given)
            if key not in seen:
                seen.add(key)
                yield Discovered(given)


def _walk(top: Path, settings: Settings, seen: set[Path]) -> Iterator[Discovered]:
    """Walk a folder without following folder links, so an entry's real path is its folder's
    real path and its name: only a file that is itself a link needs resolving (the walk does
    no per-file realpath, which costs a system call per path component)."""
    real_top = resolve(top)
    ignores = _Ignores(real_top)
    stack = [(top, real_top)]
    while stack:
        folder, real_folder = stack.pop()
        spec = _gitignore(folder) if folder != top else None
        if spec is not None:
            ignores.specs.append((real_folder, spec))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            yield Discovered(folder, f"cannot read folder: {exc.strerror or exc}")
            continue
        subfolders = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
                is_link = entry.is_symlink()
            except OSError:
                is_dir = is_link = False
            real = resolve(path) if is_link else real_folder / entry.name
            if _excluded(path, settings, real) or ignores.ignored(real, is_dir):
                continue
            if is_dir:
                if is_link:
                    continue  # never follow folder links: loops and trees outside the project
                subfolders.append((path, real))
            elif kind_of(entry.name) is not None:
                if real not in seen:
                    seen.add(real)
                    yield Discovered(path, real=real)
        stack.extend(reversed(subfolders))
