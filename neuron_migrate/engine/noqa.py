"""`# noqa` and `# noqa: NM201, NM202` comments, as flake8 and ruff read them."""

from __future__ import annotations

import re

_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)


def suppresses(text: str, code: str) -> bool:
    """Does a line (or its comment) carry a noqa that covers `code`?"""
    if "noqa" not in text.lower():
        return False
    for found in _NOQA.finditer(text):
        codes = found.group("codes")
        if codes is None:
            return True
        if code in {c.upper() for c in re.split(r"[,\s]+", codes.strip()) if c}:
            return True
    return False
