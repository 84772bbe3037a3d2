"""The parsed rule packs, kept as JSON in a per-user folder so that a run whose packs have not
changed skips parsing their TOML (packs.loader builds the rules from these documents with the
same code as from the TOML).

`$NEURON_MIGRATE_CACHE_DIR`, else `$XDG_CACHE_HOME/neuron-migrate`, else
`~/.cache/neuron-migrate`: one `packs-<key>.json` per key (the tool version and every pack
file's path and bytes), written atomically. JSON, never pickle: an entry is data and cannot run
code. Anything odd (no home, an unreadable, corrupt or foreign entry, a read-only folder) is a
miss, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

ENV = "NEURON_MIGRATE_CACHE_DIR"
PREFIX = "packs-"
# the newest entries kept when one is written (each change to a pack, a new version or another
# set of user packs makes its own entry)
KEEP = 8


def folder() -> Path | None:
    """The per-user cache folder, or None when there is no home to put it in."""
    chosen = os.environ.get(ENV)
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # a relative one is to be ignored (XDG base directories)
        return Path(xdg) / "neuron-migrate"
    try:
        return Path.home() / ".cache" / "neuron-migrate"
    except (RuntimeError, KeyError):
        return None


def _entry(key: str) -> Path | None:
    base = folder()
    return None if base is None else base / f"{PREFIX}{key}.json"


def read(key: str) -> dict[str, Any] | None:
    """The documents stored under `key` (file path -> parsed TOML), or None."""
    entry = _entry(key)
    if entry is None:
        return None
    try:
        with open(entry, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    docs = data.get("docs")
    return docs if isinstance(docs, dict) else None


def write(key: str, docs: dict[str, Any]) -> None:
    """Store `docs` under `key`, then drop all but the newest KEEP entries. Silent on failure
    (a value JSON cannot hold, a TOML date for one, is not stored either)."""
    entry = _entry(key)
    if entry is None:
        return
    try:
        payload = json.dumps({"key": key, "docs": docs}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return
    import tempfile  # only a run that stores packs needs it (start-up stays small)

    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=f".tmp-{PREFIX}", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
        os.replace(tmp, entry)
        tmp = None
        _prune(entry.parent)
    except OSError:
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _entries(base: Path) -> list[Path]:
    try:
        return [p for p in base.iterdir() if p.name.startswith(PREFIX) and p.suffix == ".json"]
    except OSError:
        return []


def _prune(base: Path) -> None:
    def age(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    for old in sorted(_entries(base), key=age, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()


def clean() -> tuple[Path | None, int]:
    """Remove the stored packs (our files only: the folder may be one the user named); the
    folder and how many files were removed."""
    base = folder()
    if base is None:
        return None, 0
    removed = 0
    try:
        leftovers = [p for p in base.iterdir() if p.name.startswith(f".tmp-{PREFIX}")]
    except OSError:
        leftovers = []
    for path in _entries(base) + leftovers:
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass
    return base, removed
