"""Requirement text as written: its name and extras, its marker, a new specifier in its place;
pip's options that take a value."""

from __future__ import annotations

# pip options followed by a value (`-i URL`), in requirements files and `pip install` commands
PIP_VALUE_OPTIONS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--trusted-host",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--upgrade-strategy",
    "--src",
    "--cache-dir",
    "--log",
    "--progress-bar",
    "--no-binary",
    "--only-binary",
}


def split_marker(text: str) -> tuple[str, str]:
    """`torch==2.1 ; python_version > "3.8"` -> ('torch==2.1', ' ; python_version > "3.8"')."""
    if ";" not in text:
        return text.rstrip(), text[len(text.rstrip()) :]
    head = text[: text.index(";")].rstrip()
    return head, text[len(head) :]


def name_and_extras(head: str) -> str:
    """The name and extras as written: `torch_neuronx[foo]` of `torch_neuronx[foo] == 2.1`."""
    end = 0
    while end < len(head) and (head[end].isalnum() or head[end] in "._-"):
        end += 1
    rest = head[end:].lstrip()
    if rest.startswith("["):
        close = rest.find("]")
        if close != -1:
            return head[:end] + rest[: close + 1]
    return head[:end]


def repin(text: str, specifier: str, name: str | None = None) -> str:
    """A requirement with a new specifier (and optionally a new name: then extras go), keeping
    the spelling of the name, the extras and the marker as written."""
    head, marker = split_marker(text)
    kept = name_and_extras(head) if name is None else name
    return f"{kept}{specifier}{marker}"
