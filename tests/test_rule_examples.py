"""Every rule's own examples, from its pack, run as tests (Fixit's habit)."""

from __future__ import annotations

import pytest

from neuron_migrate.packs.loader import load_rules
from tests.conftest import run_code

RULES = load_rules()


def _settings(example) -> dict:
    s = example.settings
    return {
        "unsafe": bool(s.get("unsafe-fixes", False)),
        "target": s.get("target-device", "neuron"),
        "compile": bool(s.get("compile", False)),
    }


def _packs(rule) -> dict:
    """An opt-in pack's examples run with every pack on (`ALL`), the others with the defaults."""
    return {} if rule.default else {"select": ("ALL",)}


def _cases():
    for rule in RULES:
        for index, example in enumerate(rule.examples):
            yield pytest.param(rule, example, id=f"{rule.code}-example{index + 1}")


def _ok_cases():
    for rule in RULES:
        files = rule.ok_files or ("snippet.py",) * len(rule.ok)
        for index, (snippet, filename) in enumerate(zip(rule.ok, files)):
            yield pytest.param(rule, snippet, filename, id=f"{rule.code}-ok{index + 1}")


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_has_examples(rule):
    assert any(e.after is not None for e in rule.examples), (
        f"{rule.code} has no before/after example"
    )
    assert rule.ok, f"{rule.code} has no `ok` example"
    assert rule.why.strip() and rule.fix_text.strip() and rule.source.startswith("https://")


@pytest.mark.parametrize(("rule", "example"), list(_cases()))
def test_example_is_reported(rule, example):
    settings = _settings(example)
    settings.pop("unsafe")
    settings.update(_packs(rule))
    result = run_code(example.before, dedent=False, filename=example.file, **settings)
    assert rule.code in [f.code for f in result.findings], result.findings
    if example.after is not None and rule.fix_safety == "manual":
        # the hand-migrated code of a manual rule is what the rule asks for: not reported
        done = run_code(example.after, dedent=False, filename=example.file, **settings)
        assert rule.code not in [f.code for f in done.findings], done.findings


@pytest.mark.parametrize(("rule", "example"), list(_cases()))
def test_example_fix(rule, example):
    settings = _settings(example)
    select = (rule.code, "NM603", "NMC130")
    result = run_code(
        example.before, dedent=False, select=select, fix=True, filename=example.file, **settings
    )
    assert result.error is None
    new = result.fixed_source if result.fixed_source is not None else example.before
    if example.after is None or rule.fix_safety == "manual":
        assert new == example.before, "a manual rule must not change the code"
        return
    assert new == example.after
    # a second fix changes nothing, and the rule no longer fires
    again = run_code(new, dedent=False, select=select, fix=True, filename=example.file, **settings)
    assert again.fixed_source is None
    assert not [f for f in again.findings if f.code == rule.code and f.fix is not None]


@pytest.mark.parametrize(("rule", "snippet", "filename"), list(_ok_cases()))
def test_ok_is_not_reported(rule, snippet, filename):
    result = run_code(snippet, dedent=False, filename=filename, **_packs(rule))
    assert rule.code not in [f.code for f in result.findings], result.findings


def test_codes_and_names_unique():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
