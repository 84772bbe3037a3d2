"""Bytes to text and back: decoding as Python does (coding cookie, BOM), and the atomic write
every --fix goes through."""

from __future__ import annotations

import io
import os
import tokenize
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Decoded:
    text: str
    encoding: str

    def encode(self, text: str) -> bytes:
        """New text in the file's own encoding (a BOM stays a BOM)."""
        return text.encode(self.encoding)


class DecodeProblem(Exception):
    """Bytes that are not text this tool can read; the message says why."""


def decode(data: bytes) -> Decoded:
    """Decode a Python source file the way the interpreter would."""
    if b"\x00" in data:
        raise DecodeProblem("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DecodeProblem(f"bad coding cookie: {exc}") from None
    try:
        return Decoded(data.decode(encoding), encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise DecodeProblem(
            f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}"
        ) from None


def write_atomic(path: Path, data: bytes, expected: bytes) -> None:
    """Write via a temporary file in the same folder and os.replace, keeping the file mode.
    Refuses when the file changed on disk since it was read."""
    stat = path.stat()
    # the mode bits say what the owner meant, even for root (who may write anything)
    if not stat.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise OSError("file is read-only")
    # the new file is made in the folder and renamed over the old one: the folder must be
    # writable, by its mode bits too
    folder = path.parent.stat()
    if not folder.st_mode & 0o222 or not os.access(path.parent, os.W_OK | os.X_OK):
        raise OSError("folder is read-only")
    import tempfile  # only a run that writes needs it

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".nm-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.st_mode & 0o7777)
        if path.read_bytes() != expected:
            raise OSError("file changed on disk while it was being fixed; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
