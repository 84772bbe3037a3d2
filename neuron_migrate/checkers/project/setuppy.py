"""setup.py: the literal lists given to `setup(install_requires=..., extras_require=...,
python_requires=...)`, read with `ast` (never executed). A name bound once at module level to a
literal list (`REQUIRES = [...]`) counts as that literal."""

from __future__ import annotations

import ast
import re

from neuron_migrate.checkers.project import deps
from neuron_migrate.checkers.project.core import Hit, Lines, TextEdit, apply_edits

TRIGGER = re.compile(rb"(?i)torch|neuron|xla")


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


def analyze(text: str) -> list[Hit]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the Python checker reports it
    lines = Lines(text)
    names = _literals(tree)
    found: list[deps.Dep] = []
    python = None
    for call in _setup_calls(tree):
        for keyword in call.keywords:
            if keyword.arg in ("install_requires", "extras_require", "setup_requires"):
                for node in _strings(keyword.value, names):
                    if node.lineno != node.end_lineno:
                        continue
                    requirement = deps.parse(node.value)
                    if requirement is None or requirement.url:
                        continue
                    line = lines.content(node.lineno)
                    col = _char_col(line, node.col_offset)
                    end = _char_col(line, node.end_col_offset)
                    if line[col - 1 : end - 1][1:-1] != node.value:
                        continue  # escapes or implicit concatenation: leave it
                    found.append(deps.Dep(node.value, node.lineno, col + 1, requirement, end))
            elif keyword.arg == "python_requires" and isinstance(keyword.value, ast.Constant):
                python = keyword.value
    hits = deps.check(found)
    for hit in hits:
        dep = hit.edit
        if not isinstance(dep, deps.Dep):
            continue
        start = lines.offset(dep.line, dep.col)
        if hit.replacement != "":
            hit.edit = TextEdit(start, start + len(dep.text), hit.replacement)
            continue
        # removal: the element, its comma and the spaces after it; its line when alone there
        line = lines.content(dep.line)
        after = re.match(r"\s*,?\s*(#.*)?$", line[dep.where - 1 :])
        if line[: dep.col - 2].strip() == "" and after:
            hit.edit = lines.whole_line(dep.line)
        else:
            rest = re.match(r"\s*,\s*", line[dep.where - 1 :])
            cut = dep.where - 1 + (rest.end() if rest else 0)
            hit.edit = TextEdit(start - 1, lines.offset(dep.line, 1) + cut, "")
    if python is not None and isinstance(python.value, str) and deps.neuron_project(found):
        if deps.old_python(python.value) and python.lineno == python.end_lineno:
            line = lines.content(python.lineno)
            col = _char_col(line, python.col_offset) + 1
            start = lines.offset(python.lineno, col)
            value = python.value
            hits.append(
                deps.python_hit(
                    value,
                    python.lineno,
                    col,
                    col + len(value),
                    TextEdit(start, start + len(value), deps.PYTHON_FIX),
                )
            )
    return hits


def apply(text: str, hits: list[Hit]) -> str:
    return apply_edits(text, [h.edit for h in hits])
