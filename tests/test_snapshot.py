"""What users see stays the same across refactors: findings, messages and fixes on examples/
and on every rule's own snippets, compared with a snapshot taken before the code moved.

An intended change of behaviour updates the snapshot deliberately:

    NEURON_MIGRATE_UPDATE_SNAPSHOT=1 pytest tests/test_snapshot.py

and the diff of tests/data/behaviour_snapshot.json shows what changed for users.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from neuron_migrate.api import run
from neuron_migrate.checkers.base import Options
from neuron_migrate.config.settings import Settings
from neuron_migrate.packs.loader import load_rules
from tests.conftest import run_code

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "tests" / "data" / "behaviour_snapshot.json"
MODES = {
    "check": {},
    "fix": {"fix": True},
    "unsafe-cpu": {"fix": True, "unsafe": True, "target": "cpu"},
}


def _finding(f) -> str:
    fix = f.fix.safety.value if f.fix else "manual"
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    return f"{cell}{f.span.line}:{f.span.column} {f.code} [{fix}] {f.message}"


def _examples_tree() -> dict:
    out = {}
    for mode, opts in MODES.items():
        settings = Settings(root=REPO, target_device=opts.get("target", "neuron"))
        options = Options(unsafe_fixes=opts.get("unsafe", False), diff=opts.get("fix", False))
        result = run([REPO / "examples"], settings, options, jobs=1, cache=False)
        for file in result.files:
            entry = out.setdefault(file.path, {})
            if mode == "check":
                entry["findings"] = [_finding(f) for f in file.findings]
            elif file.fixed_source is not None:
                entry[mode] = file.fixed_source
    return out


def _rule_snippets() -> dict:
    out = {}
    for rule in load_rules():
        if not rule.default:
            continue  # opt-in packs (off by default) came after the snapshot
        snippets = [(f"example{i + 1}", e.before, e.file) for i, e in enumerate(rule.examples)]
        files = rule.ok_files or ("snippet.py",) * len(rule.ok)
        snippets += [(f"ok{i + 1}", s, f) for i, (s, f) in enumerate(zip(rule.ok, files))]
        for label, text, filename in snippets:
            entry = {}
            for mode, opts in MODES.items():
                result = run_code(text, dedent=False, filename=filename, **opts)
                if mode == "check":
                    entry["findings"] = [_finding(f) for f in result.findings]
                elif result.fixed_source is not None:
                    entry[mode] = result.fixed_source
            out[f"{rule.code}-{label}"] = entry
    return out


def current() -> dict:
    return {"examples": _examples_tree(), "rules": _rule_snippets()}


def test_behaviour_matches_the_snapshot():
    now = current()
    if os.environ.get("NEURON_MIGRATE_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip("snapshot updated")
    before = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for section in ("examples", "rules"):
        for key in sorted(set(before[section]) | set(now[section])):
            assert now[section].get(key) == before[section].get(key), f"{section}: {key} changed"
