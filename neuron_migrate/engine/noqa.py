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


# a file-level directive on a line of its own: "neuron-migrate: noqa" (every rule, or the codes
# after a colon) or ruff's file-level form with our codes after the colon (only the codes of
# this tool count: ruff's file-level form with no codes is meant for ruff)
_FILE_NOQA = re.compile(
    r"^[ \t]*#[ \t]*(?P<tool>neuron-migrate|ruff)[ \t]*:[ \t]*noqa"
    r"(?:[ \t]*:[ \t]*(?P<codes>[A-Za-z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Za-z]+[0-9]+)*))?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
# the codes of this tool's rules (a pack letter may follow NM)
OUR_CODE = re.compile(r"^NM[A-Z]?[0-9]{3}$")
ALL = "ALL"


def file_exemptions(text: str) -> frozenset[str]:
    """The codes a file-level directive switches off in this file; {"ALL"} for every rule."""
    if "noqa" not in text and "NOQA" not in text.upper():
        return frozenset()
    codes: set[str] = set()
    for found in _FILE_NOQA.finditer(text):
        listed = found.group("codes")
        if listed is None:
            if found.group("tool").lower() == "neuron-migrate":
                codes.add(ALL)
            continue
        codes.update(
            c.upper() for c in re.split(r"[,\s]+", listed) if c and OUR_CODE.match(c.upper())
        )
    return frozenset(codes)


def exempt(codes: frozenset[str], code: str) -> bool:
    return bool(codes) and (ALL in codes or code in codes)


def line_codes(text: str) -> list[str]:
    """The codes of this tool a line's `# noqa: ...` names (for the unused / unknown warning)."""
    if "noqa" not in text.lower():
        return []
    out: list[str] = []
    for found in _NOQA.finditer(text):
        listed = found.group("codes")
        if listed:
            out += [c.upper() for c in re.split(r"[,\s]+", listed.strip()) if c]
    return [c for c in out if OUR_CODE.match(c)]
