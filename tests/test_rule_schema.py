"""rules/rule.schema.json and rules/pack.schema.json say what the loader reads, and every
built-in rule file is valid under them and points at them (`#:schema`, for editors)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from neuron_migrate.config.tomlread import tomllib
from neuron_migrate.packs import loader, vocabulary
from neuron_migrate.packs.vocabulary import ACTION_PARAMS
from tests.conftest import REPO

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

_spec = importlib.util.spec_from_file_location("rule_schema", REPO / "scripts" / "rule_schema.py")
rule_schema = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rule_schema)

RULE = json.loads(rule_schema.RULE_SCHEMA.read_text(encoding="utf-8"))
PACK = json.loads(rule_schema.PACK_SCHEMA.read_text(encoding="utf-8"))
REGISTRY = referencing.Registry().with_resource(
    "rule.schema.json", referencing.Resource.from_contents(RULE)
)


def _errors(schema: dict, data: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(schema, registry=REGISTRY)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)
    ]


def _toml(path):
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_schemas_and_headers_are_current():
    stale = rule_schema.stale()
    assert not stale, f"run `python scripts/rule_schema.py`: stale {sorted(map(str, stale))}"


def test_schema_keys_are_the_loaders():
    match = RULE["definitions"]["match"]
    assert set(RULE["properties"]) == loader.RULE_KEYS
    assert set(RULE["required"]) <= loader.RULE_KEYS
    assert set(match["properties"]) == vocabulary.PATTERN_KEYS
    assert set(match["properties"]["kind"]["enum"]) == vocabulary.ALL_KINDS
    assert set(match["properties"]["where"]["enum"]) == set(vocabulary.WHERE)
    assert set(match["properties"]["args"]["enum"]) == set(vocabulary.ARGS)
    assert set(match["properties"]["action"]["enum"]) == set(ACTION_PARAMS)
    example = RULE["definitions"]["example"]["properties"]
    assert set(example) == set(loader.Example.__dataclass_fields__)


@pytest.mark.parametrize(
    "path", rule_schema.rule_files(), ids=lambda p: p.relative_to(REPO).as_posix()
)
def test_rule_file_is_valid(path):
    assert _errors(RULE, _toml(path)) == []


@pytest.mark.parametrize(
    "path", rule_schema.pack_files(), ids=lambda p: p.relative_to(REPO).as_posix()
)
def test_pack_file_is_valid(path):
    assert _errors(PACK, _toml(path)) == []


GOOD = {
    "code": "NM999",
    "name": "some-rule",
    "severity": "error",
    "message": "m",
    "why": "w",
    "fix": "f",
    "source": "https://example.org",
    "ok": ["x = 1\n"],
    "match": [{"kind": "call", "names": ["a.b"], "action": "remove-statement", "safety": "safe"}],
    "example": [{"before": "a\n", "after": "b\n", "settings": {"unsafe-fixes": True}}],
}


@pytest.mark.parametrize(
    "change",
    [
        {"colour": "red"},  # unknown rule field
        {"code": "X1"},
        {"severity": "fatal"},
        {"match": [{"kind": "call", "names": ["a"], "colour": "red"}]},
        {"match": [{"kind": "no-such-kind"}]},
        {"match": [{"kind": "code", "names": ["a"]}]},  # kind code without a case
        {"match": [{"kind": "call", "names": ["a"], "case": "x"}]},  # a case without kind code
        {"match": [{"kind": "call", "names": ["a"], "when": "not a function name"}]},
        {"match": [{"kind": "call", "names": ["a"], "action": "remove-statement"}]},  # no safety
        # a field of another action
        {
            "match": [
                {
                    "kind": "call",
                    "names": ["a"],
                    "action": "remove-statement",
                    "safety": "safe",
                    "template": "x",
                }
            ]
        },  # fmt: skip
        {"match": [{"kind": "call", "names": ["a"], "template": "x"}]},  # a field, no action
        {"example": [{"before": "a", "colour": "red"}]},
    ],
)
def test_schema_rejects_what_the_loader_rejects(change, tmp_path):
    bad = {**GOOD, **change}
    assert _errors(RULE, GOOD) == []
    assert _errors(RULE, bad) != []
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.toml").write_text('[pack]\nname = "p"\n', encoding="utf-8")
    (pack / "NM999_some_rule.toml").write_text(_as_toml(bad), encoding="utf-8")
    with pytest.raises(loader.PackError):
        loader.load_pack(pack)


def test_the_valid_rule_loads(tmp_path):
    (tmp_path / "pack.toml").write_text('[pack]\nname = "p"\n', encoding="utf-8")
    (tmp_path / "NM999_some_rule.toml").write_text(_as_toml(GOOD), encoding="utf-8")
    assert [r.code for r in loader.load_pack(tmp_path)] == ["NM999"]


def test_one_file_pack_is_valid():
    assert _errors(PACK, {"pack": {"name": "p"}, "rule": [GOOD]}) == []
    assert _errors(PACK, {"pack": {"name": "p"}, "rule": [{**GOOD, "colour": 1}]}) != []


def _as_toml(data: dict) -> str:
    """Just enough TOML for the cases above (json strings are TOML basic strings)."""

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(i) for i in v) + "]"
        return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }"

    lines = []
    for key, v in data.items():
        if key in ("match", "example"):
            for table in v:
                lines.append(f"[[{key}]]")
                lines += [f"{json.dumps(k)} = {value(x)}" for k, x in table.items()]
        else:
            lines.insert(0, f"{json.dumps(key)} = {value(v)}")
    return "\n".join(lines) + "\n"
