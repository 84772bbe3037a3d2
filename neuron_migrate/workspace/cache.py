"""A cache of check results keyed on file content, tool version, enabled rules and settings.

`.neuron_migrate_cache/` at the project root (with a CACHEDIR.TAG and a .gitignore, removed by
`neuron-migrate clean`). One small JSON file per checked file. Anything odd in it (a corrupt
entry, a foreign folder, no permission) is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

from neuron_migrate import __version__
from neuron_migrate.model import Finding, Fix, Safety, Severity, Span

FOLDER = ".neuron_migrate_cache"
TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by neuron-migrate.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def _digest(*parts: bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


class Cache:
    """Check results of one configuration (tool version + rules + settings)."""

    def __init__(self, root: Path, configuration: str):
        self.base = root / FOLDER
        self.folder = self.base / f"v1-{_digest(__version__.encode(), configuration.encode())}"
        self.enabled = True
        self._ready = False
        # entry folders known to exist (a put costs a mkdir otherwise)
        self._made: set[Path] = set()

    @classmethod
    def for_run(
        cls, root: Path, rules: tuple, fingerprint: str, packs: tuple[str, ...] = ()
    ) -> Cache:
        """The cache of a run: its settings, its enabled rules and the text of every pack."""
        from neuron_migrate.packs.loader import builtin_rules_dir, pack_sources

        texts = []
        files = pack_sources(builtin_rules_dir())
        for pack in map(Path, packs):
            # a user's pack is a file of [[rule]] tables or a folder like the built-in ones
            files += pack_sources(pack) if pack.is_dir() else [pack]
        for pack in files:
            try:
                texts.append(pack.read_bytes())
            except OSError:
                texts.append(str(pack).encode())
        codes = ",".join(r.code for r in rules)
        return cls(root, fingerprint + "\n" + codes + "\n" + _digest(*texts))

    def _prepare(self) -> bool:
        if not self.enabled or self._ready:
            return self.enabled
        try:
            if not self.base.is_dir():
                self.base.mkdir(exist_ok=True)
                (self.base / "CACHEDIR.TAG").write_text(TAG)
                (self.base / ".gitignore").write_text("# created by neuron-migrate\n*\n")
            elif not (self.base / "CACHEDIR.TAG").is_file():
                self.enabled = False  # not ours: leave it alone
                return False
            self.folder.mkdir(exist_ok=True)
            self._ready = True
            return True
        except OSError:
            self.enabled = False
            return False

    def _entry(self, relative: str, data: bytes) -> Path:
        key = _digest(relative.encode(), data)
        return self.folder / key[:2] / key

    def get(self, relative: str, data: bytes, display: str) -> list[Finding] | None:
        if not self.enabled:
            return None
        try:
            with open(self._entry(relative, data), "rb") as handle:
                raw = json.loads(handle.read())
            return [_finding(item, display) for item in raw]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, relative: str, data: bytes, findings: list[Finding]) -> None:
        if not self._prepare():
            return
        entry = self._entry(relative, data)
        try:
            if entry.parent not in self._made:
                entry.parent.mkdir(exist_ok=True)
                self._made.add(entry.parent)
            payload = json.dumps([_record(f) for f in findings])
            fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
            os.replace(tmp, entry)
        except OSError:
            self.enabled = False


def _record(finding: Finding) -> dict:
    data = asdict(finding)
    data.pop("path")
    data["severity"] = finding.severity.value
    if finding.fix is not None:
        data["fix"] = {"safety": finding.fix.safety.value, "replacement": finding.fix.replacement}
    return data


def _finding(item: dict, display: str) -> Finding:
    fix = item.get("fix")
    return Finding(
        path=display,
        code=item["code"],
        name=item["name"],
        severity=Severity(item["severity"]),
        message=item["message"],
        span=Span(**item["span"]),
        fix=Fix(Safety(fix["safety"]), fix["replacement"]) if fix else None,
        source_line=item.get("source_line", ""),
        cell=item.get("cell"),
    )


def clean(root: Path) -> bool:
    """Remove the cache folder under `root`; True when there was one."""
    folder = root / FOLDER
    if not (folder / "CACHEDIR.TAG").is_file():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True
