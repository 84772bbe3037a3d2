"""Companion modules: a plain module of the user's project that migrated code imports (for
example the one that holds a device mesh shared by several files).

A fix that needs one names it with its source (see engine/coderule.py). After the fixed files are
written, each companion is written once, as `<name>.py` in the deepest folder that contains every
file importing it (beside a script; at the top of a package tree, where `import <name>` resolves
when the scripts run from there). An existing file of that name is never overwritten, so a second
run, or a user's edited copy, is left alone.
"""

from __future__ import annotations

import os
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
            wanted.setdefault(name, (source, []))[1].append(Path(result.path).resolve().parent)
    targets = []
    for name, (source, folders) in sorted(wanted.items()):
        target = Path(os.path.commonpath(folders)) / f"{name}.py"
        if not target.exists():
            targets.append((target, source))
    return targets


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
