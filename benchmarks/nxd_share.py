"""What share of a tree's NeuronX Distributed API uses `--fix --unsafe-fixes` migrates.

    python benchmarks/nxd_share.py TREE [TREE ...] [--top 25] [--json] [--keep DIR]

For each tree: count the NxD uses (below), copy the tree to a temporary folder, run
`neuron-migrate check --fix --unsafe-fixes --target-device cpu --no-cache` on the copy, count
again, and print the uses before and after, how many are gone, the share gone, what the tool
reported (the findings of its NxD rules, NM313 on, and how many carried a fix) and the most frequent APIs left.

What counts as one NxD use (stdlib `ast`; the checked code is never imported or run):

- A file's NxD bindings are the names its import statements bind from `neuronx_distributed`,
  wherever the statement is (module level, in a function, under `if` / `try`):
  `import neuronx_distributed[.x] [as n]`, `from neuronx_distributed[.x] import a [as b]`.
  Relative imports (`from .layers import ...`, NxD's own package) and star imports bind nothing.
  Shadowing is not tracked: a later `n = 1` does not unbind `n`.
- A use is one load of a bound name, taken with the longest attribute chain on it:
  `layers.ColumnParallelLinear(...)` with `from neuronx_distributed.parallel_layers import layers`
  is one use of `neuronx_distributed.parallel_layers.layers.ColumnParallelLinear`; in
  `nxd.parallel_layers.parallel_state.get_tensor_model_parallel_rank()` the chain is one use.
  Calls, references (`isinstance(m, ColumnParallelLinear)`, a function passed as an argument),
  decorators and annotations all count; the import statements themselves do not (they are
  printed as `imports`).
- Files: `*.py`, and the code cells of `*.ipynb` (lines starting with `%` or `!` dropped). A
  file that does not parse is skipped and counted in `unparsed`.

"gone" is uses before minus uses after, over the whole tree; a fix that rewrites a use into
another NxD use (none does) would not count as gone.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = "neuronx_distributed"


def nxd_codes() -> str:
    """The codes of the NxD rules: named `neuronx-distributed` or `nxd-*` in `neuron-migrate rules`."""
    listing = subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "rules"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    rows = (line.split() for line in listing)
    return ",".join(
        row[0]
        for row in rows
        if len(row) > 1 and (row[1] == "neuronx-distributed" or row[1].startswith("nxd-"))
    )


def source_of(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return ""
    lines = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            body = cell.get("source", "")
            body = "".join(body) if isinstance(body, list) else body
            lines += [
                line for line in body.splitlines() if not line.lstrip().startswith(("%", "!"))
            ]
            lines.append("")
    return "\n".join(lines)


def bindings(tree: ast.AST) -> tuple[dict[str, str], int]:
    """name -> the qualified name it is bound to, and the number of NxD import statements."""
    bound: dict[str, str] = {}
    statements = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != ROOT:
                    continue
                statements += 1
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[ROOT] = ROOT
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != ROOT:
                continue
            statements += 1
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound, statements


def uses(tree: ast.AST, bound: dict[str, str]) -> list[str]:
    """The qualified name of every use: a loaded bound Name with its longest attribute chain."""
    found: list[str] = []
    inner: set[int] = set()  # Names and Attributes inside a chain already counted
    for node in ast.walk(tree):  # breadth first: an outer Attribute comes before its inner parts
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        chain, part = [], node
        while isinstance(part, ast.Attribute):
            chain.append(part.attr)
            inner.add(id(part.value))
            part = part.value
        if not isinstance(part, ast.Name) or not isinstance(part.ctx, ast.Load):
            continue
        inner.add(id(part))
        if part.id in bound:
            found.append(".".join([bound[part.id], *reversed(chain)]))
    return found


def count(tree_root: Path) -> dict:
    per_api: Counter[str] = Counter()
    files = nxd_files = unparsed = imports = 0
    for path in sorted(tree_root.rglob("*")):
        if path.suffix not in (".py", ".ipynb") or not path.is_file():
            continue
        files += 1
        try:
            tree = ast.parse(source_of(path))
        except (SyntaxError, ValueError):
            unparsed += 1
            continue
        bound, statements = bindings(tree)
        imports += statements
        found = uses(tree, bound) if bound else []
        nxd_files += bool(found or statements)
        per_api.update(found)
    return {
        "files": files,
        "nxd_files": nxd_files,
        "unparsed": unparsed,
        "imports": imports,
        "uses": sum(per_api.values()),
        "apis": per_api,
    }


def findings(tree_root: Path) -> tuple[int, int]:
    """The NxD rules' findings of the tool on the tree, and how many carry an (unsafe) fix."""
    run = subprocess.run(
        [sys.executable, "-m", "neuron_migrate", "check", "--no-cache", "--exit-zero"]
        + ["--unsafe-fixes", "--target-device", "cpu", "--select", nxd_codes(), "--format", "json"]
        + [str(tree_root)],
        capture_output=True,
        text=True,
        check=True,
    )
    reported = json.loads(run.stdout or "[]")
    return len(reported), sum(1 for f in reported if f.get("fix"))


def measure(tree_root: Path, keep: Path | None) -> dict:
    before = count(tree_root)
    reported, fixable = findings(tree_root)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / tree_root.name
        shutil.copytree(tree_root, copy, symlinks=True)
        subprocess.run(
            [sys.executable, "-m", "neuron_migrate", "check", "--fix", "--unsafe-fixes"]
            + ["--target-device", "cpu", "--no-cache", "--exit-zero", "-q", "-o", "/dev/null"]
            + [str(copy)],
            capture_output=True,
            text=True,
            check=True,
        )
        after = count(copy)
        left, _ = findings(copy)
        if keep is not None:
            shutil.copytree(copy, keep / tree_root.name, dirs_exist_ok=True)
    gone = before["uses"] - after["uses"]
    return {
        "tree": str(tree_root),
        "files": before["files"],
        "nxd_files": before["nxd_files"],
        "nxd_files_after": after["nxd_files"],
        "unparsed": before["unparsed"],
        "imports": before["imports"],
        "uses": before["uses"],
        "uses_after": after["uses"],
        "gone": gone,
        "share": gone / before["uses"] if before["uses"] else 0.0,
        "findings": reported,
        "fixable": fixable,
        "findings_after": left,
        "before": before["apis"],
        "remaining": after["apis"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=25, help="remaining APIs to list")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--keep", type=Path, help="copy the migrated trees into this folder")
    options = parser.parse_args()
    results = [measure(tree.resolve(), options.keep) for tree in options.trees]
    if options.json:
        for result in results:
            result["before"] = dict(result["before"].most_common())
            result["remaining"] = dict(result["remaining"].most_common())
        print(json.dumps(results, indent=2))
        return
    for r in results:
        print(f"== {r['tree']}")
        print(
            f"files {r['files']} (NxD in {r['nxd_files']}, after the fix {r['nxd_files_after']}; "
            f"unparsed {r['unparsed']}), NxD import statements {r['imports']}"
        )
        print(
            f"NxD uses {r['uses']}, after the fix {r['uses_after']}: gone {r['gone']} "
            f"({r['share']:.0%})"
        )
        print(
            f"tool findings of the NxD rules: {r['findings']}, with a fix {r['fixable']} "
            f"({r['fixable'] / max(r['findings'], 1):.0%}); after the fix {r['findings_after']}"
        )
        print(f"top remaining APIs (of {len(r['remaining'])}):")
        for api, n in r["remaining"].most_common(options.top):
            print(f"  {n:5d}  {api}")


if __name__ == "__main__":
    main()
