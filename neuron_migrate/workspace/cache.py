"""A cache of check results keyed on file content, tool version, enabled rules and settings.

`.neuron_migrate_cache/` at the project root (with a CACHEDIR.TAG and a .gitignore, removed by
`neuron-migrate clean`). One JSON file per configuration, read once and written once per run:
for each file checked (its path relative to the root), the digest of its bytes and its
findings. A file per checked file cost a create, a write and a rename each, the larger part of a
cold run's work in the main process on a real tree. Anything odd in it (a corrupt file, a
foreign folder, no permission) is a miss, never an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from neuron_migrate import __version__
from neuron_migrate.model import Finding, Fix, Safety, Severity, Span
from neuron_migrate.packs.loader import digest

FOLDER = ".neuron_migrate_cache"
TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by neuron-migrate.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

# relative path -> [digest of the file's bytes, its findings as JSON records]
Entries = dict[str, list]


def content_digest(data: bytes) -> str:
    """What an entry records of a file's bytes."""
    return digest(data)


class Cache:
    """Check results of one configuration (tool version + rules + settings)."""

    def __init__(self, root: Path, configuration: str):
        self.base = root / FOLDER
        self.file = self.base / f"v2-{digest(__version__.encode(), configuration.encode())}.json"
        self.enabled = True
        self._entries: Entries | None = None  # as read at the first look-up
        self._new: Entries = {}  # this run's results, written by save()

    @classmethod
    def for_run(
        cls, root: Path, rules: tuple, fingerprint: str, packs: tuple[str, ...] = ()
    ) -> Cache:
        """The cache of a run: its settings, its enabled rules and the text of every pack (read
        once, by the pack loader)."""
        from neuron_migrate.packs.loader import pack_digest

        codes = ",".join(r.code for r in rules)
        return cls(root, fingerprint + "\n" + codes + "\n" + pack_digest(packs))

    def recorder(self) -> Cache:
        """An empty cache of the same configuration that only collects results, for a worker
        process: the main process served the hits, and writes what `take` hands back."""
        copy = Cache.__new__(Cache)
        copy.base, copy.file, copy.enabled = self.base, self.file, self.enabled
        copy._entries, copy._new = {}, {}
        return copy

    def _read(self) -> Entries:
        try:
            with open(self.file, "rb") as handle:
                entries = json.loads(handle.read())["entries"]
        except (OSError, ValueError, KeyError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def get(self, relative: str, data: bytes, display: str) -> list[Finding] | None:
        if not self.enabled:
            return None
        if self._entries is None:
            self._entries = self._read()
        entry = self._entries.get(relative)
        try:
            if entry is None or entry[0] != content_digest(data):
                return None
            return [_finding(item, display) for item in entry[1]]
        except (ValueError, KeyError, TypeError, IndexError):
            return None

    def put(self, relative: str, data: bytes, findings: list[Finding]) -> None:
        self.put_digest(relative, content_digest(data), findings)

    def put_digest(self, relative: str, bytes_digest: str, findings: list[Finding]) -> None:
        """`put` for bytes known by their `content_digest` (read by another process)."""
        if self.enabled:
            self._new[relative] = [bytes_digest, [_record(f) for f in findings]]

    def take(self) -> Entries:
        """The results put since the last take (a worker hands them to the main process)."""
        new, self._new = self._new, {}
        return new

    def adopt(self, entries: Entries) -> None:
        """Results a worker put, to be written with this run's own."""
        self._new.update(entries)

    def save(self) -> None:
        """Write this run's results: the file is read again and replaced whole, so that the
        entries another run wrote meanwhile stay (for a path both wrote, this run's)."""
        if not self._new or not self._prepare():
            return
        import tempfile  # a run served from the cache writes nothing and need not load it

        entries = self._read()
        entries.update(self._new)
        try:
            fd, tmp = tempfile.mkstemp(dir=self.base, prefix=".tmp-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"entries": entries}, handle, separators=(",", ":"))
                os.replace(tmp, self.file)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            self.enabled = False
            return
        self._entries, self._new = entries, {}

    def _prepare(self) -> bool:
        if not self.enabled:
            return False
        try:
            if not self.base.is_dir():
                self.base.mkdir(exist_ok=True)
                (self.base / "CACHEDIR.TAG").write_text(TAG)
                (self.base / ".gitignore").write_text("# created by neuron-migrate\n*\n")
            elif not (self.base / "CACHEDIR.TAG").is_file():
                self.enabled = False  # not ours: leave it alone
            return self.enabled
        except OSError:
            self.enabled = False
            return False


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
    import shutil

    folder = root / FOLDER
    if not (folder / "CACHEDIR.TAG").is_file():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True
