"""Companion modules: a plain module of the user's project that migrated code imports (for
example the one that holds a device mesh shared by several files).

A fix that needs one names it with its source (see engine/coderule.py). After the fixed files are
written, each companion is written as `<name>.py` where `import <name>` resolves when the scripts
run: Python puts a script's own folder first on `sys.path`, so for each importing file in the
folder of the nearest script of the run at or above it (a file with an `if __name__ ==
"__main__":` block, or a notebook); the importing files under no script get one copy in the
deepest folder that holds them all.
Independent samples in one repository each get their own copy. An existing file of that name is
never overwritten, so a second run, or a user's edited copy, is left alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from neuron_migrate.model import FileResult


def companion_targets(files: list[FileResult], *, written: bool = True) -> list[tuple[Path, str]]:
    """The companion modules to create, each its path and source: those the written files import
    (`written=False`: those the fixed sources would import, for --diff), without any file that
    already exists."""
    wanted: dict[str, tuple[str, list[Path]]] = {}
    for result in files:
        if written and not result.written:
            continue
        if not written and result.fixed_source is None:
            continue
        for name, source in result.companions.items():
            folder = Path(result.path).resolve().parent
            wanted.setdefault(name, (source, []))[1].append(folder)
    if not wanted:
        return []
    importing = {folder for _source, folders in wanted.values() for folder in folders}
    scripts = {
        folder
        for result in files
        if (folder := Path(result.path).resolve().parent) in _with_parents(importing)
        and _is_script(result)
    }
    targets = []
    for name, (source, importers) in sorted(wanted.items()):
        for folder in _homes(importers, scripts):
            target = folder / f"{name}.py"
            if not target.exists():
                targets.append((target, source))
    return targets


_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", re.MULTILINE)


def _with_parents(folders: set[Path]) -> set[Path]:
    return folders | {parent for folder in folders for parent in folder.parents}


def _is_script(result: FileResult) -> bool:
    """A file that runs as a program: its folder is where its imports are looked up first (a
    notebook runs in its own folder). A file the prefilter passed by is read here."""
    if result.path.endswith(".ipynb"):
        return True
    if not result.path.endswith(".py"):
        return False
    text = result.fixed_source or result.original_source
    if text is None:
        try:
            text = Path(result.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    return bool(_MAIN_GUARD.search(text))


def _homes(importers: list[Path], scripts: set[Path]) -> list[Path]:
    """The folders a companion goes to: for each importing file, the nearest folder of a script
    of the run at or above it, and the deepest common folder of the importing files under no
    script."""
    homes: set[Path] = set()
    rest = []
    for folder in importers:
        above = [s for s in scripts if folder == s or s in folder.parents]
        if above:
            homes.add(max(above, key=lambda s: len(s.parts)))
        else:
            rest.append(folder)
    if rest:
        homes.add(Path(os.path.commonpath(rest)))
    return sorted(homes)


def write_companions(files: list[FileResult]) -> list[Path]:
    """Write the companion modules the written files import; returns the paths created."""
    created = []
    for target, source in companion_targets(files):
        try:
            with open(target, "x", encoding="utf-8", newline="\n") as out:
                out.write(source)
        except OSError:
            continue
        created.append(target)
    return created
