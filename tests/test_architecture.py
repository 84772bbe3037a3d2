"""The layout is a contract: folders in the order data flows, each importing only what lies
downstream of it, no import cycles, and no rule knowledge outside rules/ (README,
"Architecture")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "neuron_migrate"

# each layer and the layers it may import (model.py, the plain data, is open to all)
ALLOWED = {
    # the CLI starts the server (`neuron-migrate server`), imported only by that command
    "cli": {
        "api",
        "config",
        "workspace",
        "checkers",
        "engine",
        "packs",
        "report",
        "adoption",
        "server",
    },
    "server": {"api", "config", "workspace", "checkers", "packs", "report", "adoption"},
    "api": {"config", "workspace", "checkers", "packs"},
    "adoption": {"checkers", "engine"},
    "report": {"api", "config", "checkers", "packs"},
    "workspace": {"config", "checkers", "packs"},
    "checkers": {"config", "engine", "packs"},
    "engine": {"config", "packs"},
    "config": {"packs"},
    "packs": {"config"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every neuron_migrate module a file imports, at the top or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("neuron_migrate"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("neuron_migrate"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if _exists(sub) else node.module)
    return found


def _exists(module: str) -> bool:
    base = PACKAGE.parent.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            # importing a package's submodule runs the package's __init__ first: not an edge back
            if nxt not in graph or node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_layers_import_only_downstream():
    wrong = []
    for module, imports in _graph().items():
        layer = _layer(module)
        if layer not in ALLOWED:
            continue
        for imported in imports:
            other = _layer(imported)
            if other in ("", "model", layer) or other in ALLOWED[layer]:
                continue
            wrong.append(f"{module} imports {imported}")
    assert wrong == []


RULE_CODE = re.compile(r"^NM[A-Z]?[0-9]{3}$")
LEGACY = ("torch_xla", "neuronx_distributed", "optimum.neuron", "torch_neuronx", "libneuronxla")


def test_the_engine_and_the_command_line_know_no_rule():
    """No string literal in neuron_migrate/ is a rule code (other than the engine's own NM000)
    or a legacy API name: that knowledge lives in rules/."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if id(node) in docstrings:
                continue
            words = re.findall(r"[A-Za-z_][\w.\-]*", node.value)
            codes = [w for w in words if RULE_CODE.match(w) and w != "NM000"]
            legacy = [w for w in words if w.replace("-", "_").startswith(LEGACY)]
            if codes or legacy:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value[:60]!r}")
    assert found == []


# OPEN: none since the CUDA pack (device strings) landed; the test holds every entry to two
# rules or more.
SINGLE_USE_FOR_NOW: set[str] = set()


def test_every_vocabulary_entry_is_used_by_two_rules_or_more():
    from neuron_migrate.packs import vocabulary
    from neuron_migrate.packs.loader import load_rules

    used: dict[str, set[str]] = {}
    for rule in load_rules():
        for pattern in rule.patterns:
            entries = [f"kind {pattern.kind}", f"where {pattern.where}", f"args {pattern.args}"]
            if pattern.action:
                entries.append(f"action {pattern.action}")
            for entry in entries:
                used.setdefault(entry, set()).add(rule.code)
    vocabulary_entries = (
        [f"kind {k}" for k in [*vocabulary.MATCH_KINDS, *vocabulary.PROJECT_KINDS]]
        + [f"where {w}" for w in vocabulary.WHERE if w != "any"]
        + [f"args {a}" for a in vocabulary.ARGS if a != "any"]
        + [f"action {a}" for a in vocabulary.ACTION_PARAMS]
    )
    single = {e for e in vocabulary_entries if len(used.get(e, ())) < 2}
    assert single - SINGLE_USE_FOR_NOW == set(), "used by fewer than two rules"
    assert SINGLE_USE_FOR_NOW - single == set(), "now used twice: drop it from the OPEN list"
