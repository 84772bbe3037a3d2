"""setup.py: the literal lists given to `setup(install_requires=..., extras_require=...,
python_requires=...)`, read with `ast` (never executed). A name bound once at module level to a
literal list (`REQUIRES = [...]`) counts as that literal."""

from __future__ import annotations

import ast
import re

from neuron_migrate.checkers.project.api import Item, Pin, PythonRequires, parse_requirement
from neuron_migrate.checkers.project.core import Lines, TextEdit, apply_edits

ITEMS = frozenset({"pin", "python-requires"})


def _char_col(line: str, byte_col: int) -> int:
    """ast columns count UTF-8 bytes; Finding columns count characters (1-based)."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1


def _setup_calls(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "setup":
                yield node


def _literals(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level names bound exactly once to a list, tuple or dict literal."""
    bound: dict[str, list[ast.AST]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(node.value)
    return {k: v[0] for k, v in bound.items() if len(v) == 1}


def _strings(node: ast.AST | None, names: dict[str, ast.AST]) -> list[ast.Constant]:
    if isinstance(node, ast.Name):
        node = names.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(node, ast.Dict):
        return [s for value in node.values for s in _strings(value, names)]
    return []


def read(text: str) -> list[Item]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the Python checker reports it
    lines = Lines(text)
    names = _literals(tree)
    found: list[Item] = []
    for call in _setup_calls(tree):
        for keyword in call.keywords:
            if keyword.arg in ("install_requires", "extras_require", "setup_requires"):
                for node in _strings(keyword.value, names):
                    if node.lineno != node.end_lineno:
                        continue
                    requirement = parse_requirement(node.value)
                    if requirement is None or requirement.url:
                        continue
                    line = lines.content(node.lineno)
                    col = _char_col(line, node.col_offset)
                    end = _char_col(line, node.end_col_offset)
                    if line[col - 1 : end - 1][1:-1] != node.value:
                        continue  # escapes or implicit concatenation: leave it
                    found.append(
                        Pin(
                            node.lineno,
                            col + 1,
                            col + 1 + len(node.value),
                            end,
                            node.value,
                            requirement,
                        )
                    )
            elif keyword.arg == "python_requires" and isinstance(keyword.value, ast.Constant):
                python = keyword.value
                if isinstance(python.value, str) and python.lineno == python.end_lineno:
                    line = lines.content(python.lineno)
                    col = _char_col(line, python.col_offset) + 1
                    value = python.value
                    found.append(
                        PythonRequires(python.lineno, col, col + len(value), None, value, value)
                    )
    return found


def edit(text: str, item: Item, replacement: str) -> tuple[TextEdit, str] | None:
    lines = Lines(text)
    start = lines.offset(item.line, item.col)
    if replacement != "":
        return TextEdit(start, start + item.end_col - item.col, replacement), replacement
    # removal: the element, its comma and the spaces after it; its line when alone there
    line = lines.content(item.line)
    closing = item.where  # the column after the closing quote
    after = re.match(r"\s*,?\s*(#.*)?$", line[closing - 1 :])
    if line[: item.col - 2].strip() == "" and after:
        return lines.whole_line(item.line), replacement
    rest = re.match(r"\s*,\s*", line[closing - 1 :])
    cut = closing - 1 + (rest.end() if rest else 0)
    return TextEdit(start - 1, lines.offset(item.line, 1) + cut, ""), replacement


def apply(text: str, edits: list[TextEdit]) -> str:
    return apply_edits(text, edits)
